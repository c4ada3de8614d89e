"""Reflect before answering: cheap checks of the answer's form, one revision at most."""

from __future__ import annotations

import json

import pytest

from vadar.programs.api_text import render_api
from vadar.agents.program import ProgramAgent
from vadar.agents.reflect import BLIND, deterministic_issue
from vadar.agents.techniques.revise import RevisionRecord
from vadar.programs.question_form import parse_question
from vadar.config import ReasoningConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.sandbox import execute

NAMESPACE = {"image": "img", "loc": lambda image, prompt: [[0.0, 0.0, 5.0, 5.0]] * 3}
REFLECT = ReasoningConfig(reflect=True)


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


@pytest.mark.parametrize("question, expected", [
    ("Is there a red cube?", "yes/no"),
    ("There is a large cube; is it the same color as the ball?", "yes/no"),
    ("How many spheres are there?", "count"),
    ("Are there more cubes than spheres? How many cubes are there?", "count"),
    ("There is a small ball; what is its color?", "text"),
    ("What material is the big cylinder made of?", "text"),
    ("How far is the chair from the table in meters?", "number"),
    ("What is the height of the lamp?", "number"),
    ("How many times taller is the lamp than the chair?", "number"),
    ("How much farther from the camera is the lamp than the chair, in meters?", "number"),
    ("There is a red cube; what number of spheres are left of it?", "count"),
    ("The thing left of the cube: which one is it?", None),
])
def test_the_question_form_gives_the_answer_type(question, expected):
    assert parse_question(question).answer_type == expected


def test_answers_out_of_range_are_caught():
    # the kind the question's wording fixes is the writer's check for every program (answer_kinds)
    assert deterministic_issue(parse_question("Is there a cube?"), 2) is None
    assert "never negative" in deterministic_issue(parse_question("How far is the cube?"), -1.0)
    assert "one value" in deterministic_issue(parse_question("How many cubes?"), [1, 2])
    assert "finite" in deterministic_issue(parse_question("How tall is it?"), float("inf"))
    assert deterministic_issue(parse_question("How many cubes are there?"), 2) is None
    assert deterministic_issue(parse_question("Which is it?"), "the cube") is None


UNFIXED = "Tell me whether there is a red cube."
"""A question whose wording fixes no kind of answer: the writer accepts any, reflect still reviews it."""


def test_reflect_sends_one_revision_when_the_answer_is_several_values():
    llm = ScriptedLLM(["final_result = loc(image, 'red cube')", "final_result = 'yes'"])
    outcome = ProgramAgent(llm, run, reasoning=REFLECT).solve(UNFIXED, render_api(), NAMESPACE)
    assert outcome.answer == "yes" and outcome.attempts == 2
    assert "the answer must be one value" in llm.calls[1][-1]["content"]
    [revision] = outcome.techniques.get(RevisionRecord).revisions
    assert revision.startswith("`final_result` is a list")


def test_only_one_revision_and_a_broken_revision_keeps_the_answer_before_it():
    llm = ScriptedLLM(["final_result = [3]", "final_result = [4]"])
    outcome = ProgramAgent(llm, run, reasoning=REFLECT).solve(UNFIXED, render_api(), NAMESPACE)
    assert outcome.answer == [4] and llm.remaining == 0 and outcome.attempts == 2
    llm = ScriptedLLM(["final_result = [3]", "final_result = missing"])
    outcome = ProgramAgent(llm, run, max_attempts=2, reasoning=REFLECT).solve(UNFIXED, render_api(), NAMESPACE)
    assert outcome.answer == [3] and outcome.error is None and outcome.program.strip() == "final_result = [3]"


def test_a_fitting_answer_needs_no_llm_check_without_a_constraint():
    llm = ScriptedLLM(["final_result = 'yes' if loc(image, 'red cube') else 'no'"])
    outcome = ProgramAgent(llm, run, reasoning=REFLECT).solve("Is there a red cube?", render_api(), NAMESPACE)
    assert outcome.answer == "yes" and llm.remaining == 0 and outcome.techniques.get(RevisionRecord) is None


def test_with_a_constraint_the_llm_compares_program_and_constraint():
    constraint = json.dumps({"reference_frame": "world", "targets": ["red cube"], "relation": "none",
                             "quantity": "height of the red cube", "unit": "metres", "answer_type": "number"})
    llm = ScriptedLLM([constraint, "cube = loc(image, 'red cube')[0]\nfinal_result = 0.5",
                       "REVISE: it measures the width, not the height", "final_result = 0.7"])
    outcome = ProgramAgent(llm, run, reasoning=ReasoningConfig(formalize=True, reflect=True)).solve(
        "How tall is the red cube?", render_api(), NAMESPACE)
    assert outcome.answer == 0.7 and outcome.attempts == 4
    check = llm.calls[2]
    assert "quantity height of the red cube (metres)" in check[-1]["content"] and "final_result = 0.5" in check[-1]["content"]
    assert "it measures the width, not the height" in llm.calls[3][-1]["content"]


def test_a_program_that_calls_no_module_is_sent_back_once():
    llm = ScriptedLLM(["mug_height = 0.076  # a typical mug\nfinal_result = mug_height",
                       "final_result = len(loc(image, 'mug')) * 0.1"])
    outcome = ProgramAgent(llm, run, reasoning=REFLECT).solve("How tall is the mug?", render_api(), NAMESPACE)
    assert outcome.answer == pytest.approx(0.3) and outcome.attempts == 2
    assert outcome.techniques.get(RevisionRecord).revisions == [BLIND] and BLIND in llm.calls[1][-1]["content"]
    assert "called no module" in BLIND
    assert deterministic_issue(parse_question("How tall is the mug?"), 0.076, looked=False) == BLIND
    assert deterministic_issue(parse_question("How tall is the mug?"), 0.076) is None
