"""Reasoning techniques as writers wrapping the plain writer: the documented order, and the question
parsed once for all of them."""

from __future__ import annotations

import json

import pytest

import vadar.programs.question_form as question_form
from vadar.agents.formalize import FormalizeRecord
from vadar.agents.program import ProgramAgent
from vadar.agents.techniques.build_tries import BuildTriesRecord
from vadar.agents.techniques.compose import compose, layers
from vadar.agents.techniques.constraint import ConstraintFit
from vadar.agents.techniques.priors import SizePriorsRecord
from vadar.agents.techniques.revise import Reflection, RevisionRecord
from vadar.agents.techniques.scene_tests import SceneCheck
from vadar.agents.techniques.writer import PlainWriter
from vadar.config import ReasoningConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.api_text import render_api
from vadar.sandbox import execute

NAMESPACE = {"image": "img", "loc": lambda image, prompt: [[0.0, 0.0, 5.0, 5.0]]}
EVERYTHING = ReasoningConfig(samples=3, formalize=True, reflect=True, tests=True, size_priors=True)


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


def plain() -> PlainWriter:
    return PlainWriter(ScriptedLLM([]), run)


def reviews(writer) -> list[type]:
    while not hasattr(writer, "reviews"):
        writer = writer.inner
    return [type(review) for review in writer.reviews]


def test_every_technique_wraps_the_plain_writer_in_the_documented_order():
    assert layers(compose(EVERYTHING, plain())) == [
        "Formalize", "UnitTests", "SizePriors", "Vote", "CountPassed", "Revise", "PlainWriter"]
    assert reviews(compose(EVERYTHING, plain())) == [Reflection, SceneCheck]  # reflect checks the constraint's type
    assert layers(compose(EVERYTHING, plain(), accept=lambda outcome: True, tries=3)) == [
        "Formalize", "UnitTests", "SizePriors", "BuildTries", "CountPassed", "Revise", "PlainWriter"]


@pytest.mark.parametrize("reasoning, expected", [
    (ReasoningConfig(), ["PlainWriter"]),  # every option off: the plain writer alone
    (ReasoningConfig(samples=2), ["Vote", "PlainWriter"]),
    (ReasoningConfig(formalize=True), ["Formalize", "Revise", "PlainWriter"]),
    (ReasoningConfig(reflect=True, size_priors=True, size_priors_shown=False), ["SizePriors", "Revise", "PlainWriter"]),
])
def test_a_technique_that_is_off_is_not_in_the_chain(reasoning, expected):
    writer = compose(reasoning, plain())
    assert layers(writer) == expected
    if reasoning.formalize:
        assert reviews(writer) == [ConstraintFit]


def test_the_question_is_parsed_once_for_every_technique(monkeypatch):
    calls = []
    original = question_form.priors_in_text
    monkeypatch.setattr(question_form, "priors_in_text", lambda text: calls.append(text) or original(text))
    constraint = json.dumps({"reference_frame": "world", "targets": ["mug"], "relation": "none",
                             "quantity": "height of the mug", "unit": "metres", "answer_type": "number"})
    look = "mug = loc(image, 'mug')[0]\n"
    llm = ScriptedLLM([constraint, look + "final_result = 7.0", look + "final_result = 0.1"])
    reasoning = ReasoningConfig(formalize=True, reflect=True, size_priors=True)
    outcome = ProgramAgent(llm, run, reasoning=reasoning).solve("How tall is the mug?", render_api(), NAMESPACE)
    assert calls == ["How tall is the mug?"]
    assert outcome.answer == 0.1 and "mug's height is typically" in outcome.techniques.get(RevisionRecord).revisions[0]
    assert outcome.techniques.get(SizePriorsRecord).names == ["mug"]
    assert outcome.techniques.get(FormalizeRecord).constraint.quantity == "height of the mug"


def test_a_labelled_build_records_its_tries_and_the_accepted_one():
    llm = ScriptedLLM(["final_result = 3", "final_result = 2", "final_result = 5"])
    agent = ProgramAgent(llm, run)
    outcome = agent.solve("How many mugs?", render_api(), NAMESPACE, accept=lambda o: o.answer == 2, tries=3)
    assert outcome.answer == 2 and outcome.attempts == 2 and llm.remaining == 1
    assert outcome.techniques.get(BuildTriesRecord) == BuildTriesRecord(tries=2, accepted_try=1)
    never = ProgramAgent(ScriptedLLM(["final_result = 3", "final_result = 4"]), run).solve(
        "How many mugs?", render_api(), NAMESPACE, accept=lambda o: False, tries=2)
    assert never.answer == 3 and never.techniques.get(BuildTriesRecord) == BuildTriesRecord(2, None)
    once = ProgramAgent(ScriptedLLM(["final_result = 3"]), run).solve(
        "How many mugs?", render_api(), NAMESPACE, accept=lambda o: False)
    assert once.answer == 3 and once.techniques.get(BuildTriesRecord) is None  # one try: nothing to record
