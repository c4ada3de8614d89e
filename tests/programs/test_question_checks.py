"""The checks of what a program does with its question: a `loc` phrase the question never names,
and `final_result` left unset on some path."""

from __future__ import annotations

import pytest

from vadar.programs.api_text import render_api
from vadar.programs.call_checks import check_program
from vadar.programs.call_signatures import callable_api
from vadar.programs.loc_phrases import phrases_from_question
from vadar.programs.result_paths import result_on_every_path

API = callable_api(render_api())
QUESTION = "Is there a big green object made of the same material as the tiny gray thing?"


def _problems(code: str, check, question: str = QUESTION) -> list[str]:
    return [problem.message for problem in check_program(code, API, (check,), question)]


def test_a_loc_phrase_the_question_never_names_is_refused_with_the_question():
    code = 'cubes = loc(image, "red cube")\nfinal_result = len(cubes)'
    [message] = _problems(code, phrases_from_question)
    assert message.startswith("line 1: `loc(image, 'red cube')` looks for an object this question never names")
    assert QUESTION in message


@pytest.mark.parametrize("phrase, question", [
    ("big green object", QUESTION),  # its own words
    ("large green thing", QUESTION),  # "big" is "large" in CLEVR's vocabulary
    ("gray things", QUESTION),  # a plural of its word
    ("metallic things", "Is there a metal cube?"),  # a longer form of its word
])
def test_a_phrase_sharing_a_word_with_the_question_by_meaning_passes(phrase, question):
    code = f'boxes = loc(image, "{phrase}")\nfinal_result = len(boxes)'
    assert _problems(code, phrases_from_question, question) == []


@pytest.mark.parametrize("code", [
    'boxes = loc(image, "object")\nfinal_result = len(boxes)',  # generic words only
    'name = "red cube"\nboxes = loc(image, name)\nfinal_result = len(boxes)',  # not a literal
])
def test_generic_or_computed_phrases_are_left_alone(code):
    assert _problems(code, phrases_from_question) == []


def test_without_a_question_loc_phrases_are_not_checked():
    assert _problems('final_result = len(loc(image, "red cube"))', phrases_from_question, question="") == []


def test_a_program_that_stops_after_its_guard_is_refused_naming_the_if():
    code = ('boxes = loc(image, "large yellow thing")\n'
            'if boxes:\n    yellow = boxes[0]\nelse:\n    final_result = "no"\n')
    [message] = _problems(code, result_on_every_path)
    assert message.startswith("line 2: `final_result` is not set on every path (the `if` at line 2 sets it in one "
                              "branch only)")


def test_an_answer_set_only_inside_a_loop_is_refused():
    code = ('for box in loc(image, "cylinder"):\n'
            '    if depth(image, box) > 3:\n        final_result = vqa(image, "What color is it?", box)\n'
            '        break\n')
    [message] = _problems(code, result_on_every_path)
    assert "the loop at line 1 sets it only when its body runs" in message


@pytest.mark.parametrize("code", [
    'final_result = "no"\nfor box in loc(image, "cube"):\n    final_result = "yes"\n',  # a default first
    'if loc(image, "cube"):\n    final_result = "yes"\nelse:\n    final_result = "no"\n',
    ('for box in loc(image, "cube"):\n    if depth(image, box) > 3:\n        final_result = "yes"\n'
     '        break\nelse:\n    final_result = "no"\n'),  # a search with its answer when none is found
    'try:\n    final_result = len(loc(image, "cube"))\nexcept IndexError:\n    final_result = 0\n',
    'boxes = loc(image, "cube")\nif not boxes:\n    raise ValueError("no cube")\nelse:\n    final_result = 1\n',
    'boxes = loc(image, "cube")\n',  # never set at all: the sandbox says so
])
def test_a_program_answered_on_every_path_passes(code):
    assert _problems(code, result_on_every_path) == []


def test_a_break_before_the_answer_leaves_the_path_unanswered():
    code = ('for box in loc(image, "cube"):\n    if depth(image, box) > 3:\n        break\n'
            '    final_result = "yes"\nelse:\n    final_result = "no"\n')
    assert _problems(code, result_on_every_path)
