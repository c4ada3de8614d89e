"""A refused group helper request is remembered: the next batch does not pay for the same refusal."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

from group_samples import COUNT, OFF_BY_ONE, run, sample_fixture, writer  # noqa: F401 (a fixture)

from api_store import ApiStore
from vadar.library.clusters import GroupWriter, asked_before
from vadar.library.frames import group_programs
from vadar.library.shape_helpers import CATALOGUE
from vadar.library.truth_checks import TruthChecks
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.namespace import program_namespace


def _add_count_question(store, dataset, modules, questions, phrase):
    """A right counting program for `phrase` on the first counting question's image; the questions with it."""
    first = next(q for q in questions if q.question == "How many cylinders are there?")
    code = f'final_result = len(loc(image, "{phrase}"))\n'
    value = run(code, program_namespace(dataset.image(first), modules)).value
    extra = dataclasses.replace(first, question_id=f"extra-{phrase}", question=f"How many {phrase} are there?",
                                answer=str(value))
    store.record_verified_program(batch_id=None, question_id=extra.question_id, question=extra.question,
                                  variant="without", code=code, answer=str(value), gold=str(value),
                                  error=None, correct=True, uses=[])
    return [*questions, extra]


def test_a_refused_group_is_asked_again_only_when_enough_new_questions_joined_it(sample):
    """A refused group grows by a question in the next batch; asking again would repeat the refusal."""
    store, dataset, modules, questions = sample
    refused = writer(store, ScriptedLLM([OFF_BY_ONE, OFF_BY_ONE])).write(dataset, modules, questions)
    assert "_count_matching" in refused.rejected
    [attempt] = store.group_attempts()
    assert attempt.name == "_count_matching" and attempt.frame == "how many _ are there"
    assert len(attempt.question_ids) == 2 and "rewritten programs changed" in attempt.reason
    # one new question (fewer than min_uses = 2): not asked
    questions = _add_count_question(store, dataset, modules, questions, "cubes")
    silent = ScriptedLLM([])
    events: list[str] = []
    quiet = GroupWriter(store, silent, run, min_uses=2, truth=TruthChecks(run), on_event=events.append)
    assert quiet.write(dataset, modules, questions).admitted == [] and not silent.calls
    assert any("not asked again: refused before" in e for e in events)
    # a second new question makes two the refused request never saw: asked, and admitted
    questions = _add_count_question(store, dataset, modules, questions, "spheres")
    group = [p.question for p in group_programs(store.verified_programs(correct_only=True))[0]]
    reply = COUNT.split("\n\nfinal_result")[0] + "\n\n" + "".join(
        f'final_result = _count_matching(image, "{q.split("many ")[1].split(" are")[0]}")\n' for q in group) + "```"
    asked = ScriptedLLM([reply])
    assert writer(store, asked).write(dataset, modules, questions).admitted == ["_count_matching"]
    assert len(asked.calls) == 1


def test_refused_group_requests_travel_with_a_build_export(tmp_path):
    source = ApiStore.memory()
    source.record_group_attempt(batch_id=None, frame="how many _ are there", question_ids=["1", "2"],
                                name="_count_matching", reason="wrong on 1 of 2")
    data = source.export()
    assert data["group_attempts"][0]["question_ids"] == ("1", "2")
    target = ApiStore(tmp_path / "imported.sqlite")
    target.import_functions(json.loads(json.dumps(data)), with_build=True)
    [attempt] = target.group_attempts()
    assert attempt.question_ids == ("1", "2") and attempt.reason == "wrong on 1 of 2"
    without_build = ApiStore.memory()
    assert without_build.import_functions(data) == [] and not without_build.group_attempts()


def test_only_a_group_that_overlaps_a_refused_one_and_adds_too_little_is_held_back():
    refused = [frozenset({"a", "b", "c"})]
    assert asked_before(("a", "b", "c"), refused, 3)
    assert asked_before(("a", "b", "c", "d", "e"), refused, 3)  # two new questions
    assert not asked_before(("a", "d", "e", "f"), refused, 3)  # three new questions
    assert not asked_before(("x", "y"), refused, 3)  # another group
    assert not asked_before(("a", "b"), [], 3)


def _program(question, code, uses=()):
    return SimpleNamespace(question=question, code=code, uses=list(uses))


def test_questions_an_admitted_shape_helper_answers_whole_are_not_grouped():
    """Their programs are shown that helper's call: a group helper for them repeats it (a CLEVR build's
    group writer handed back `_attribute_of_same`'s docstring with no body, twice)."""
    entry = next(h for h in CATALOGUE if h.name == "_attribute_of_same")
    events: list[str] = []
    grouper = GroupWriter(ApiStore.memory(), ScriptedLLM([]), run, min_uses=2, on_event=events.append)
    same = [_program(q, 'ref = loc(image, "cube")[0]\nfinal_result = vqa(image, "What color?", ref)\n') for q in (
        "What color is the other cylinder that is the same size as the red cube?",
        "What is the material of the yellow sphere that is the same size as the rubber cube?")]
    count = _program("How many cylinders are there?", 'c = loc(image, "cylinders")\nfinal_result = len(c)\n')
    one_call = _program("How many spheres are there?", "final_result = _count(image, 'spheres')", uses=["_count"])
    admitted = [SimpleNamespace(name=entry.name, signature=entry.signature)]
    assert grouper._ungrouped([*same, count, one_call], admitted) == [count]
    assert events == ["2 right program(s) not grouped: `_attribute_of_same` answers their questions in one call"]
    # a step helper of that name with another signature answers nothing whole
    events.clear()
    step = [SimpleNamespace(name=entry.name, signature="(image: Image, box: BBox) -> str")]
    assert grouper._ungrouped([*same, count], step) == [*same, count] and events == []
