"""Answers that name a region count as its number, in new runs and, by `vadar rescore`, in old ones."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from base_modules.types import Region
from omni3d_bench.types import Question
from regions_scene import region_record, write_bench
from vadar.programs.answers import region_number
from vadar.programs.outcome import ProgramOutcome
from vadar.cli import app
from vadar.runs.evaluation import rescore, summarize_results, to_result, write_summary
from vadar.runs.results import ResultsFile

REGIONS = (Region("<pallet_0>", (10.0, 20.0, 30.0, 40.0)), Region("<pallet_1>", (50.0, 20.0, 70.0, 40.0)))


def question(**changes) -> Question:
    fields = dict(question_id="q", question="Among the pallets <pallet_0> and <pallet_1>, which is the leftmost?",
                  answer="0", answer_type="int", image_id="i", image_path=Path("i.png"), split="test",
                  source="test", regions=REGIONS)
    return Question(**{**fields, **changes})


def test_an_identifier_or_a_regions_box_is_its_number():
    assert region_number("<pallet_1>", REGIONS, "int") == 1
    assert region_number("pallet_0", REGIONS, "int") == 0
    assert region_number([10.2, 20.0, 30.0, 39.6], REGIONS, "int") == 0
    assert region_number((50, 20, 70, 40), REGIONS, "int") == 1
    # anything else, or another answer type, or no regions: unchanged
    assert region_number([11.0, 20.0, 30.0, 40.0], REGIONS, "int") == [11.0, 20.0, 30.0, 40.0]
    assert region_number("pallet", REGIONS, "int") == "pallet"
    assert region_number(2, REGIONS, "int") == 2
    assert region_number("<pallet_1>", REGIONS, "str") == "<pallet_1>"
    assert region_number("<pallet_1>", (), "int") == "<pallet_1>"


def test_a_new_result_scores_the_region_and_keeps_what_the_program_gave():
    result = to_result(question(), ProgramOutcome(answer=[10.0, 20.0, 30.0, 40.0], program="..."), method="static-api")
    assert result.answer == 0 and result.score == 1.0 and result.answer_given == [10.0, 20.0, 30.0, 40.0]
    plain = to_result(question(answer="1"), ProgramOutcome(answer=1, program="..."), method="static-api")
    assert plain.score == 1.0 and plain.answer_given is None


def test_rescore_uses_the_stored_answers_and_leaves_failures_alone():
    old = to_result(question(regions=()), ProgramOutcome(answer=[10.0, 20.0, 30.0, 40.0], program="..."),
                    method="static-api")
    failed = to_result(question(question_id="f"), ProgramOutcome(error="NameError"), method="static-api")
    assert old.score == 0.0
    again = rescore([old, failed], [question(), question(question_id="f")])
    assert again[0].score == 1.0 and again[0].answer == 0 and again[0].answer_given == old.answer
    assert again[1] == failed
    assert rescore(again, [question()])[0] == again[0]  # rescoring twice changes nothing


def test_rescore_command_rewrites_the_run_and_its_summary(tmp_path):
    bench = write_bench(tmp_path / "bench", [
        {"question_id": "mcq", "question": "Among the pallets <mask> and <mask>, which is the leftmost?",
         "answer": "0", "answer_type": "int", "regions": [region_record(0), region_record(1)]}])
    box = region_record(0)["box"]
    run = tmp_path / "run"
    rows = ResultsFile(run / "results.jsonl")
    rows.append(to_result(question(question_id="mcq", regions=()), ProgramOutcome(answer=box, program="..."),
                          method="static-api"))
    write_summary(summarize_results(rows.read(), {"name": "run", "method": "static-api"}), run)
    result = CliRunner().invoke(app, ["rescore", str(run), "--data", str(bench)])
    assert result.exit_code == 0, result.output
    assert "1 of 1 scores changed" in result.output
    assert ResultsFile(run / "results.jsonl").read()[0].score == 1.0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["accuracy"]["total"] == 1.0 and summary["method"] == "static-api" and summary["rescored"] is True
