"""A results.jsonl line that is no result record (a field missing, unknown or of the wrong type) is
one line naming the file and the line number in resume, rescore, compare and library track; the
report, which treats every field as optional, still writes. A split that names no file of the
data set is refused before any path is built from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.results import ResultsFile, ResultsFileError
from scripted_jobs import answer_jobs_with, program_of_its_kind

runner = CliRunner()


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> list[str]:
    """The results.jsonl lines of a finished three-question run."""
    root = tmp_path_factory.mktemp("run")
    llm = ScriptedLLM([program_of_its_kind] * 3)
    with pytest.MonkeyPatch.context() as patch:
        answer_jobs_with(patch, llm, root / "home")
        result = runner.invoke(app, ["eval", "--limit", "3", "--method", "static-api", "--out", str(root / "run")])
    assert result.exit_code == 0, result.output
    return (root / "run" / "results.jsonl").read_text().splitlines()


BREAKS = {
    "missing score": (lambda row: row.pop("score"), "the record lacks 'score'"),
    "missing question_id and question": (lambda row: row.pop("question"), "the record lacks 'question'"),
    "unknown field": (lambda row: row.update(colour="red"), "the record has the unknown field(s) 'colour'"),
    "text score": (lambda row: row.update(score="high"), "its 'score' is 'high', not int or float"),
    "bool attempts": (lambda row: row.update(attempts=True), "its 'attempts' is True, not int"),
    "text extra": (lambda row: row.update(extra="x"), "its 'extra' is 'x', not dict"),
}


def _broken(tmp_path: Path, lines: list[str], kind: str) -> Path:
    change, _ = BREAKS[kind]
    rows = [json.loads(line) for line in lines]
    change(rows[1])
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run


@pytest.mark.parametrize("kind", list(BREAKS))
def test_reading_a_bad_line_names_it(tmp_path: Path, finished: list[str], kind: str) -> None:
    run = _broken(tmp_path, finished, kind)
    with pytest.raises(ResultsFileError) as caught:
        ResultsFile(run / "results.jsonl").read()
    assert str(caught.value).startswith(f"{run / 'results.jsonl'}, line 2: {BREAKS[kind][1]}; fix or remove")


@pytest.mark.parametrize("command", ["eval", "rescore", "compare", "library track"])
@pytest.mark.parametrize("kind", ["missing score", "unknown field", "text score"])
def test_every_command_that_reads_results_says_it_in_one_line(tmp_path: Path, finished: list[str], monkeypatch,
                                                               command: str, kind: str) -> None:
    run = _broken(tmp_path, finished, kind)
    answer_jobs_with(monkeypatch, ScriptedLLM([]), tmp_path / "home")
    args = {"eval": ["eval", "--limit", "3", "--method", "static-api", "--out", str(run)],
            "rescore": ["rescore", str(run)], "compare": ["compare", str(run)],
            "library track": ["library", "track", str(run), "--baseline", str(run), "--db", str(tmp_path / "l.db")]}
    if command == "library track":
        from api_store import ApiStore

        ApiStore(tmp_path / "l.db").close()
    result = runner.invoke(app, args[command], env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    assert f"results.jsonl, line 2: {BREAKS[kind][1]}" in result.output and "Traceback" not in result.output


def test_the_report_of_a_run_with_a_bad_line_is_still_written(tmp_path: Path, finished: list[str]) -> None:
    run = _broken(tmp_path, finished, "text score")
    result = runner.invoke(app, ["report", str(run), "--out", str(tmp_path / "html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "html" / "index.html").is_file()


@pytest.mark.parametrize("split", ["../../x", "questions/../sample", "missing"])
def test_a_split_the_data_set_does_not_have_is_refused(tmp_path: Path, monkeypatch, split: str) -> None:
    monkeypatch.chdir(tmp_path)
    answer_jobs_with(monkeypatch, ScriptedLLM([]), tmp_path / "home")
    from omni3d_bench import sample_path

    result = runner.invoke(app, ["eval", "--data", str(sample_path()), "--split", split, "--method", "static-api"])
    assert result.exit_code == 2 and f"unknown split {split!r}" in result.output
    assert not (tmp_path / "runs").exists() and not list(tmp_path.parent.glob("x-*"))
