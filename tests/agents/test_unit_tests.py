"""Unit tests for visual programs: the model's own scenes, run with oracle modules, repair or outvote."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from vadar.programs.api_text import render_api
from vadar.agents.program import ProgramAgent
from vadar.agents.techniques.vote import VoteRecord
from vadar.agents.unit_tests import (BENCH_SCENES, CLEVR_SCENES, SCHEMA, TestScenes, TestWriter, UnitTestRecord,
                                     parse_tests)
from vadar.config import ReasoningConfig, VadarConfig
from vadar.programs.namespace import unit_scene_namespace
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.methods import _test_scenes
from vadar.sandbox import execute

QUESTION = "How many red cubes are there?"
COUNT_CUBES = "```python\nfinal_result = len(loc(image, 'cube'))\n```"
COUNT_RED_CUBES = "```python\nfinal_result = len(loc(image, 'red cube'))\n```"


def thing(color: str, shape: str, right: float, behind: float) -> dict:
    return {"color": color, "size": "large", "material": "rubber", "shape": shape, "right": right, "behind": behind}


TESTS = json.dumps({"scenes": [
    {"objects": [thing("red", "cube", -2, 0), thing("red", "cube", 0, 0), thing("blue", "cube", 2, 0)], "answer": 2},
    {"objects": [thing("red", "sphere", -1, 1), thing("red", "cube", 1, -1)], "answer": 1},
]})
SCENES = TestScenes(CLEVR_SCENES, unit_scene_namespace())
REAL = SCENES.namespace([thing("red", "cube", -2, 0), thing("blue", "cube", 0, 1), thing("blue", "cube", 2, -1)])


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=20, memory_mb=1024)


CLEVR_REQUESTS = Path(__file__).parents[1] / "fixtures" / "unit_tests_requests_clevr.json"


def test_a_program_that_fails_the_models_own_scene_test_is_repaired():
    llm = ScriptedLLM([TESTS, COUNT_CUBES, COUNT_RED_CUBES])
    agent = ProgramAgent(llm, run, reasoning=ReasoningConfig(tests=True))
    outcome = agent.solve(QUESTION, render_api(), REAL, test_scenes=SCENES)
    assert outcome.answer == 1 and "'red cube'" in outcome.program
    feedback = llm.calls[2][-1]["content"]
    assert "the program answered 3; the expected answer is 2" in feedback
    assert "large red rubber cube at right=-2, behind=0" in feedback
    tests = outcome.techniques.get(UnitTestRecord)
    assert tests.passed == 2 and len(tests.tests) == 2
    assert llm.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA


def test_programs_that_fail_their_tests_are_outvoted():
    llm = ScriptedLLM([TESTS, COUNT_CUBES, COUNT_CUBES, COUNT_CUBES, COUNT_CUBES, COUNT_RED_CUBES])
    agent = ProgramAgent(llm, run, reasoning=ReasoningConfig(tests=True, samples=3))
    outcome = agent.solve(QUESTION, render_api(), REAL, test_scenes=SCENES)
    vote = outcome.techniques.get(VoteRecord)
    assert [s.answer for s in vote.samples] == [3, 3, 1]  # two count every cube
    assert [s.tests_passed for s in vote.samples] == [1, 1, 2]  # counting cubes passes scene 2
    assert outcome.answer == 1 and vote.chosen_sample == 2 and vote.agreement == 1.0


def test_scenes_that_break_the_schema_are_asked_again_once():
    bad = json.dumps({"scenes": [{"objects": [thing("pink", "cube", 0, 0)], "answer": 1}]})
    llm = ScriptedLLM([bad, TESTS, COUNT_RED_CUBES])
    outcome = ProgramAgent(llm, run, reasoning=ReasoningConfig(tests=True)).solve(
        QUESTION, render_api(), REAL, test_scenes=SCENES)
    assert "'pink' is not one of" in llm.calls[1][-1]["content"]
    assert outcome.techniques.get(UnitTestRecord).refused and outcome.answer == 1
    with pytest.raises(ValueError, match="right: 9 is greater than the maximum of 3"):
        parse_tests(json.dumps({"scenes": [{"objects": [thing("red", "cube", 9, 0)], "answer": 1}]}))


def test_the_data_sets_oracles_choose_the_kind_of_test_scene():
    config = VadarConfig()
    assert _test_scenes(config, SimpleNamespace(), []) is None  # off: nothing to build
    config.reasoning.tests = True
    assert _test_scenes(config, SimpleNamespace(oracle_kind="annotations3d"), []).kind is BENCH_SCENES
    assert _test_scenes(config, SimpleNamespace(), []).kind is CLEVR_SCENES


def test_the_clevr_test_request_is_the_one_recorded_before_the_generated_benchmarks_scenes():
    tests = json.dumps({"scenes": [{"objects": [thing("red", "cube", 0, 0)], "answer": 1}]})
    llm = ScriptedLLM(["not json", tests])
    TestWriter(llm).write(QUESTION)
    assert json.loads(json.dumps(llm.requests)) == json.loads(CLEVR_REQUESTS.read_text(encoding="utf-8"))


def test_a_test_scene_of_one_object_needs_no_camera_fit():
    result = run("final_result = len(loc(image, 'small metal sphere'))",
                 SCENES.namespace([{"color": "cyan", "size": "small", "material": "metal", "shape": "sphere",
                          "right": 0.5, "behind": 0.0}]))
    assert result.error is None and result.value == 1
