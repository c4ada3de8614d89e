"""A vadar question left without a working program is asked once more without the library."""

from __future__ import annotations

import json

import pytest

from vadar.config import VadarConfig
from vadar.library.hand import add_functions
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

COUNT = '''
def _count(image: Image, object_prompt: str) -> int:
    """Count the objects matching object_prompt."""
    return len(loc(image, object_prompt))
'''
BROKEN = "```python\nboxes = _count(image, 'cylinder')\nfinal_result = boxes[0]\n```"  # an int indexed
PLAIN = "```python\nfinal_result = len(loc(image, 'cylinder'))\n```"


def reply(messages):
    """The library's prompt shows `_count` and gets a program that breaks; static-api's does not."""
    return BROKEN if "def _count(" in messages[0]["content"] else PLAIN


@pytest.fixture
def config(tmp_path):
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s, config.sandbox.memory_mb = 10, 512
    return config


def _answer(config, tmp_path, name):
    llm = ScriptedLLM([reply] * 20)
    with open_session(config, llm=llm) as session:
        add_functions(session.store, COUNT)
        evaluate(session, DataSelection(limit=1).prepare(), tmp_path / name, show_progress=False, scope="all")
    return json.loads((tmp_path / name / "results.jsonl").read_text()), llm


def test_a_question_without_a_working_program_is_answered_without_the_library(config, tmp_path):
    result, llm = _answer(config, tmp_path, "fallback")
    assert result["answer"] == 2 and result["correct"] is True and result["error"] is None
    fallback = result["techniques"]["fallback"]
    assert fallback["worked"] is True and "TypeError" in fallback["first_error"]
    assert result["program"].strip() == "final_result = len(loc(image, 'cylinder'))"
    last = llm.calls[-1][0]["content"]
    assert "def _count(" not in last and "def loc(" in last  # static-api's prompt: the predefined modules alone
    assert result["attempts"] == config.agents.program_same_error_limit + 1  # both programs' replies counted


def test_the_fallback_can_be_turned_off(config, tmp_path):
    config.library.fallback = False
    result, llm = _answer(config, tmp_path, "plain")
    assert result["answer"] == "<error>" and "TypeError" in result["error"] and "fallback" not in result["techniques"]
    assert all("def _count(" in call[0]["content"] for call in llm.calls)


def test_a_second_program_the_endpoint_failed_leaves_the_question_to_be_asked_again_on_resume():
    from vadar.agents.techniques.fallback import FallbackRecord, with_fallback
    from vadar.programs.outcome import ProgramOutcome

    first = ProgramOutcome(program="final_result = x[0]", error="IndexError: list index out of range")
    down = ProgramOutcome(error="the endpoint did not answer", infrastructure=True)
    result = with_fallback(first, lambda: down)
    assert result.infrastructure and result.error == "the endpoint did not answer"
    assert result.techniques.get(FallbackRecord) == FallbackRecord("IndexError: list index out of range", False)
    working = ProgramOutcome(answer=2, program="final_result = 2")
    assert with_fallback(working, lambda: pytest.fail("a working program needs no second")) is working
