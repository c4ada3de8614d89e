"""Each technique's typed record through results.jsonl, and lines written before the records."""

from __future__ import annotations

import json
from pathlib import Path

from omni3d_bench.types import Question
from vadar.agents.formalize import Constraint, FormalizeRecord
from vadar.agents.techniques.build_tries import BuildTriesRecord
from vadar.agents.techniques.fallback import FallbackRecord
from vadar.agents.techniques.find_order import FindOrderRecord
from vadar.agents.techniques.priors import SizePriorsRecord
from vadar.agents.techniques.records import RECORD_TYPES
from vadar.agents.techniques.revise import RevisionRecord
from vadar.agents.techniques.vote import SampleRecord, VoteRecord
from vadar.agents.unit_tests import UnitTest, UnitTestRecord
from vadar.programs.records import TechniqueRecords
from vadar.runs.evaluation import rescore_run
from vadar.runs.results import QuestionResult, ResultsFile

CONSTRAINT = Constraint("camera", ["red cube"], "none", "number of red cubes", "objects", "count",
                        corrected=("answer_type 'text' -> 'count' (the question's form)",))
OBJECT = {"color": "red", "size": "large", "material": "rubber", "shape": "cube", "right": 0, "behind": 0}
RECORDS = [
    FormalizeRecord.of(CONSTRAINT, ["not a JSON object"]),
    UnitTestRecord([UnitTest([OBJECT], 1)], [], passed=1),
    SizePriorsRecord(["mug", "coffee table"], check_only=True),
    FindOrderRecord(['1. loc(image, "ball")[0]', '2. the boxes of loc(image, "cubes") that are left of object 1']),
    RevisionRecord(["`final_result` is 'yes', but the answer must be a whole number (an int)"]),
    VoteRecord([SampleRecord(2, False, ["why"], 1), SampleRecord("<error>", True)], chosen_sample=0, agreement=1.0),
    BuildTriesRecord(tries=2, accepted_try=None),
    FallbackRecord("line 1: IndexError: list index out of range", worked=True),
]


def result(**changes) -> QuestionResult:
    fields = dict(question_id="q1", question="How many red cubes are there?", answer_type="int", gold="2", answer=2,
                  score=1.0, correct=True, program="final_result = 2", error=None, attempts=3, prompt_tokens=10,
                  completion_tokens=5, cached_prompt_tokens=0, seconds=1.0, image_id="img")
    return QuestionResult(**{**fields, **changes})


def test_every_record_round_trips_through_results_jsonl_under_its_own_key(tmp_path: Path):
    assert [type(record) for record in RECORDS] == list(RECORD_TYPES)
    written = result(techniques=TechniqueRecords(RECORDS))
    results = ResultsFile(tmp_path / "results.jsonl")
    results.append(written)
    assert results.read() == [written]
    line = json.loads((tmp_path / "results.jsonl").read_text())
    assert list(line["techniques"]) == ["formalize", "unit_tests", "size_priors", "find_order", "revision", "vote",
                                      "build_tries", "fallback"]
    assert line["techniques"]["vote"]["samples"][1] == {"answer": "<error>", "error": True, "revisions": []}
    assert "extra" not in line and "answer_given" not in line


# A line as `vadar eval` wrote it before the records: every technique's fields flat under `extra`.
OLD_LINE = {
    "question_id": "q1", "question": "How many red cubes are there?", "answer_type": "int", "gold": "2", "answer": 2,
    "score": 1.0, "correct": True, "program": "final_result = 2", "error": None, "attempts": 3, "prompt_tokens": 10,
    "completion_tokens": 5, "cached_prompt_tokens": 0, "seconds": 1.0, "image_id": "img", "method": "vadar",
    "module_calls": [], "step_errors": [],
    "extra": {"constraint": CONSTRAINT.to_dict(), "constraint_refused": ["not a JSON object"],
              "constraint_corrected": list(CONSTRAINT.corrected),
              "unit_tests": [{"objects": [OBJECT], "answer": 1}], "unit_tests_refused": [], "tests_passed": 1,
              "size_priors": ["mug", "coffee table"], "size_priors_check_only": True,
              "revisions": ["`final_result` is 'yes', but the answer must be a whole number (an int)"],
              "samples": [{"answer": 2, "error": False, "revisions": ["why"], "tests_passed": 1},
                          {"answer": "<error>", "error": True, "revisions": []}],
              "chosen_sample": 0, "agreement": 1.0, "tries": 2, "accepted_try": None, "answer_given": "two"},
}


def test_a_line_from_before_the_records_loads_into_them_and_is_written_back_in_todays_form(tmp_path: Path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(OLD_LINE) + "\n")
    [loaded] = ResultsFile(path).read()
    # the fallback and the find order came after the records: no old line has one
    before = [record for record in RECORDS[:-1] if not isinstance(record, FindOrderRecord)]
    assert list(loaded.techniques) == before and loaded.answer_given == "two"
    assert loaded == result(techniques=TechniqueRecords(before), answer_given="two")
    question = Question(question_id="q1", question=OLD_LINE["question"], answer="2", answer_type="int",
                        image_id="img", image_path=tmp_path / "img.png", split="test", source="test")
    rescore_run(tmp_path, [question])
    line = json.loads(path.read_text())
    assert "extra" not in line and line["techniques"]["vote"]["agreement"] == 1.0
    assert ResultsFile(path).read()[0].techniques == loaded.techniques


def test_an_unreadable_record_is_left_out_and_the_others_load(tmp_path: Path):
    path = tmp_path / "results.jsonl"
    broken = {**OLD_LINE, "extra": {"tries": "many", "samples": [{"answer": 1, "error": False}], "agreement": 1.0}}
    path.write_text(json.dumps(broken) + "\n")
    [loaded] = ResultsFile(path).read()
    assert list(loaded.techniques) == [VoteRecord([SampleRecord(1, False)], None, 1.0)]
