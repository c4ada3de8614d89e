"""The question-shape route's search writes programs without its helper only where a sample's
judgement turns on them (`vadar.library.outcome_check`): a right question counts as a tie until then."""

from __future__ import annotations

import dataclasses

from api_store import ApiStore
from shape_samples import CALLS, NAME, RIGHT, program_writer
import test_shape_route
from test_shape_route import Questions, batch, scripted
from vadar.library.shape_route import shape_route
from vadar.library.story import helper_story
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM

clevr = test_shape_route.clevr  # the shape route tests' fixture: CLEVR dev with oracle modules
pytestmark = test_shape_route.pytestmark

def test_a_sample_right_on_every_question_is_written_no_program_without_it(clevr):
    """Right everywhere, it is kept whatever programs without it answer; the gate, its ground-truth
    cases confirming it, asks for none either (before, the search wrote one per question)."""
    questions = Questions(clevr, set(CALLS))
    llm = scripted(questions, [RIGHT])
    store = ApiStore.memory()
    report = shape_route(batch(store, llm, questions))
    assert report.admitted == [NAME]
    story = helper_story(NAME, [dataclasses.asdict(d) for d in store.decisions(NAME)]).text()
    assert "right 4 of 4 times (at most 4 without it, 4 assumed;" in story
    programs = llm.calls_of(Role.PROGRAM)  # the search's, then the gate's (a response cache answers those)
    assert len(programs) == 2 * len(questions) and all(f"def {NAME}(" in m[0]["content"] for m in programs)


def test_a_sample_short_of_programs_without_it_asks_for_them_one_at_a_time(clevr):
    """Programs right on 3 of 4 questions with the helper (the one for question 19 adds 100): the worst
    case, all 4 right without it, is above that, so programs without it are written one at a time
    until it is not (they answer 5, wrong on the first); the next sample needs no more."""
    questions = Questions(clevr, set(CALLS))
    writer = program_writer(questions)

    def program(messages):
        reply = writer(messages)
        return reply.replace("reference)\n```", "reference) + 100\n```") if "blue matte thing" in reply else reply

    drawn = iter([RIGHT, RIGHT])
    llm = ScriptedLLM([ByRole({Role.API_IMPLEMENT: lambda messages: next(drawn), Role.PROGRAM: program})] * 400)
    report = shape_route(batch(ApiStore.memory(), llm, questions))
    assert report.support[NAME] == 4
    without = [m for m in llm.calls_of(Role.PROGRAM) if f"def {NAME}(" not in m[0]["content"]]
    assert str(questions[0].answer) != "5" and len(without) == 1
