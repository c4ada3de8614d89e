"""Reasoning techniques in a whole evaluation: CLI flags, the manifest, the summary, per-question fields."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM
from scripted_jobs import answer_jobs_with



def programs(messages):
    """Three programs per question: the first and the third count an object the question names, the
    second counts everything (so the first two disagree and the vote needs the third)."""
    programs.calls += 1
    named = "cylinder" if "cylinders" in messages[-1]["content"] else "red sphere"
    what = "thing" if programs.calls % 3 == 2 else named
    return f"```python\nfinal_result = len(loc(image, '{what}'))\n```"


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    programs.calls = 0
    llm = ScriptedLLM([programs] * 30)
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    return llm


def test_eval_with_samples_records_the_options_votes_and_agreement(scripted, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--limit", "2", "--method", "static-api", "--samples", "3",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "- techniques: samples=3" in result.output
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["reasoning"]["samples"] == 3 and manifest["reasoning"]["formalize"] is False
    summary = json.loads((out / "summary.json").read_text())
    assert summary["techniques"] == "samples=3" and summary["mean_agreement"] == pytest.approx(0.6667)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(row["techniques"]["vote"]["agreement"] == pytest.approx(0.6667)
               and len(row["techniques"]["vote"]["samples"]) == 3 for row in rows)
    assert all(row["attempts"] == 3 for row in rows) and len(scripted.calls) == 6
    seeds = [r.get("seed") for r in scripted.requests]
    assert seeds == [None, 1, 2, None, 1, 2]

    again = CliRunner().invoke(app, ["eval", "--limit", "2", "--method", "static-api", "--out", str(out)])
    assert again.exit_code != 0 and "reasoning.samples=3; this command asks for reasoning.samples=1" in again.output


def test_a_bad_option_value_is_one_line(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_REASONING_SAMPLE_TEMPERATURE", "5")
    result = CliRunner().invoke(app, ["eval", "--limit", "1", "--method", "static-api", "--out", str(tmp_path / "x")])
    assert result.exit_code != 0 and "reasoning.sample_temperature must be between 0 and 2" in result.output
    assert "Traceback" not in result.output


def test_the_flags_set_the_options_and_leave_unset_ones_alone(tmp_path, monkeypatch):
    from vadar.cli.options import load_settings

    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    settings = load_settings(None, ["reasoning.reflect=true"],
                             {"samples": 2, "formalize": True, "reflect": None, "tests": True})
    chosen = settings.reasoning
    assert (chosen.samples, chosen.formalize, chosen.reflect, chosen.tests) == (2, True, True, True)
    assert chosen.label() == "samples=2+formalize+reflect+tests"
