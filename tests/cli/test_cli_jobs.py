"""`vadar run` and `vadar build-api` through the CLI, with the LLM scripted."""

import json

import pytest
from typer.testing import CliRunner

from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM
from scripted_jobs import answer_jobs_with, count_helper_router


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    llm = ScriptedLLM([count_helper_router] * 100)
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    return llm


def test_run_builds_then_answers_the_other_questions(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_LIBRARY_ADMISSION", "off")  # admission has its own tests
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "--limit", "6", "--batch-size", "3", "--batches", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the console wraps long lines
    # the sample asks three questions per image: the build takes the first image's, never part of one
    assert "from 3 questions of 1 scene; the 3 questions of the other 1 scene are evaluated" in said
    assert "batch 1 (3 questions): proposed 1, implemented 1 in 1 replies, failed 0" in result.output
    assert "+ _count" in result.output and "implementing _count (attempt 1/5)" in result.output
    assert "validation (in-sample: one batch, nothing to leave out) on 0 of 3 build questions" in said  # admission off: references by agreement, none agreed
    assert "| **total (weighted)** | 3 |" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["library_functions"] == 1 and summary["questions"] == 3 and summary["scene_disjoint"] is True


def test_run_refuses_a_build_that_would_split_a_scene(scripted, tmp_path):
    result = CliRunner().invoke(app, ["run", "--limit", "4", "--batch-size", "2", "--batches", "1",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "the first scene has 3 questions, more than the 2" in " ".join(result.output.split())
    assert scripted.calls == []


def test_build_api_reports_the_library_size(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_LIBRARY_ADMISSION", "off")
    result = CliRunner().invoke(app, ["build-api", "--limit", "2", "--batch-size", "2", "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "library: 1 implemented functions in" in result.output
    # "How many cylinders?" is covered by `_count`; "How many things are left of ...?" is not
    assert "coverage 1 of 2 build questions (50%); not covered: relation:left (1)" in result.output
    assert json.loads((tmp_path / "b" / "coverage.json").read_text())["share"] == 0.5


def test_eval_takes_module_backends_and_names_the_run_after_them(tmp_path, monkeypatch, fake_real_modules):
    llm = ScriptedLLM(["```python\nfinal_result = len(loc(image, 'cylinder'))\n```"] * 2)
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    oracle = CliRunner().invoke(app, ["eval", "--limit", "1", "--method", "static-api"])
    real = CliRunner().invoke(app, ["eval", "--limit", "1", "--method", "static-api", "--module", "loc=real"])
    assert oracle.exit_code == 0 and real.exit_code == 0, oracle.output + real.output
    first = json.loads((tmp_path / "runs/sample-sample-static-api/results.jsonl").read_text())
    second = json.loads((tmp_path / "runs/sample-sample-static-api-loc-real/results.jsonl").read_text())
    assert (first["answer"], second["answer"]) == (2, 1)  # the stand-in real detector finds one of two


def test_a_misspelt_module_is_refused_before_any_work(scripted, tmp_path):
    result = CliRunner().invoke(app, ["eval", "--module", "dpeth=real", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "unknown module 'dpeth'" in result.output
    assert scripted.calls == [] and not (tmp_path / "x").exists()


@pytest.mark.parametrize("selection, built", [
    (["--skip", "3", "--limit", "3"], ["3", "4", "5"]),  # grows from the questions after --skip
    (["--spread-over", "2", "--limit", "3"], ["0", "1"]),  # picked from the first 2, however many --limit asks
])
def test_build_api_builds_the_questions_its_selection_names(scripted, tmp_path, monkeypatch, selection, built):
    monkeypatch.setenv("VADAR_LIBRARY_ADMISSION", "off")
    from api_store import ApiStore

    result = CliRunner().invoke(app, ["build-api", *selection, "--batch-size", "3", "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    with ApiStore(tmp_path / "home" / "vadar.sqlite", create=False) as store:
        (batch,) = store.batches(store.runs("build-api")[0].id)
    assert batch.question_ids == built
