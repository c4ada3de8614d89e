"""A union count's object phrases compared with the question's outer words (`programs/either_calls`)."""

from __future__ import annotations

from dataclasses import dataclass

from vadar.agents.program import ProgramAgent
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.api_text import render_api
from vadar.programs.call_checks import CALL_CHECKS, check_program
from vadar.programs.call_signatures import callable_api
from vadar.programs.either_calls import missing_words, outer_words, union_phrases, with_words
from vadar.programs.helper_rules import MODULE_NAMES
from vadar.sandbox import execute


@dataclass(frozen=True)
class Helper:
    name: str
    signature: str
    docstring: str


EITHER = Helper("_count_either", "(image: Image, first: list[BBox], second: list[BBox]) -> int",
                "How many objects are in first or second, each counted once.")
API = callable_api(render_api([EITHER]), {"image", *MODULE_NAMES, EITHER.name})
BIG = "How many big objects are either gray metal things or cylinders?"


def test_the_outer_words_are_those_before_are_that_are_no_generic_noun():
    assert outer_words(BIG) == ["big"]
    assert outer_words("What number of matte objects are brown cylinders or large brown cylinders?") == ["matte"]
    assert outer_words("How many spheres are either large purple matte things or green things?") == ["spheres"]
    assert outer_words("How many things are either big red metallic objects or rubber things?") == []
    # sides that name relations hold references: not compared
    assert outer_words("How many objects are small metal things to the right of the brown block or large "
                       "objects that are in front of the tiny brown shiny thing?") == []
    assert outer_words("How many big objects are there?") == []


def test_words_are_compared_by_meaning():
    assert missing_words("cylinders", ["big"]) == ["big"]
    assert missing_words("large cylinders", ["big"]) == []
    assert missing_words("cubes", ["blocks"]) == []
    assert missing_words("tiny brown shiny things", ["blocks"]) == ["blocks"]
    # another size: that side counts none of the outer objects, and "big small" would contradict
    assert missing_words("small cylinders", ["big"]) == []


def test_the_told_phrase_keeps_clevrs_word_order_and_puts_a_noun_for_a_generic_one():
    assert with_words("big rubber balls", ["yellow"]) == "big yellow rubber balls"
    assert with_words("green things", ["spheres"]) == "green spheres"
    assert with_words("cylinders", ["big"]) == "big cylinders"


def test_a_side_without_the_outer_word_is_refused_with_the_phrase_that_has_it():
    code = 'final_result = _count_either(image, loc(image, "big gray metal things"), loc(image, "cylinders"))'
    [problem] = check_program(code, API, CALL_CHECKS, BIG)
    assert problem.check == "union_phrases" and problem.line == 1
    assert "leaves out 'big': the question counts only big objects" in problem.message
    assert "`loc(image, 'big cylinders')`" in problem.message
    fixed = 'final_result = _count_either(image, loc(image, "big gray metal things"), loc(image, "large cylinders"))'
    assert check_program(fixed, API, CALL_CHECKS, BIG) == []


def test_a_phrase_counted_through_a_name_or_len_is_refused_too():
    named = 'first = loc(image, "gray metal things")\nsecond = loc(image, "big cylinders")\n' \
            'final_result = _count_either(image, first, second)'
    [problem] = union_phrases_of(named)
    assert problem.line == 1 and "big gray metal things" in problem.message
    counted = 'final_result = len(loc(image, "gray metal things")) + len(loc(image, "big cylinders"))'
    assert len(union_phrases_of(counted)) == 1


def test_what_the_check_cannot_be_sure_of_is_never_blamed():
    filtered = ('count = 0\nfor box in loc(image, "objects"):\n'
                '    if vqa(image, "What size is this object?", box) == "large":\n        count += 1\n'
                'final_result = count')
    assert union_phrases_of(filtered) == []
    reassigned = 'first = loc(image, "cylinders")\nfirst = [b for b in first if b]\n' \
                 'final_result = _count_either(image, first, loc(image, "big gray metal things"))'
    assert union_phrases_of(reassigned) == []
    extended = 'first = loc(image, "cylinders")\nfirst += loc(image, "big spheres")\n' \
               'final_result = _count_either(image, first, loc(image, "big gray metal things"))'
    assert union_phrases_of(extended) == []
    code = 'final_result = _count_either(image, loc(image, "gray metal things"), loc(image, "cylinders"))'
    assert check_program(code, API, CALL_CHECKS) == []  # no question given
    assert check_program(code, API, CALL_CHECKS, "How many things are gray metal things or cylinders?") == []


def union_phrases_of(code: str):
    return check_program(code, API, [union_phrases], BIG)


def test_a_dropped_outer_word_is_sent_back_unrun():
    """The writer's first program counts the cylinders of every size; told the phrase, it counts big ones."""
    boxes = {"big gray metal things": [[0, 0, 1, 1]], "cylinders": [[2, 2, 3, 3], [4, 4, 5, 5]],
             "big cylinders": [[2, 2, 3, 3]]}
    namespace = {"image": "img", "loc": lambda image, prompt: boxes.get(prompt, []),
                 "_count_either": lambda image, first, second: len(first) + len(second)}
    dropped = '```python\nfinal_result = _count_either(image, loc(image, "big gray metal things"), loc(image, "cylinders"))\n```'
    kept = '```python\nfinal_result = _count_either(image, loc(image, "big gray metal things"), loc(image, "big cylinders"))\n```'
    runs: list[str] = []

    def sandbox(code, names):
        runs.append(code)
        return execute(code, dict(names), timeout_s=10, memory_mb=512)

    llm = ScriptedLLM([dropped, kept])
    outcome = ProgramAgent(llm, sandbox).solve(BIG, render_api([EITHER]), namespace)
    assert outcome.answer == 2 and outcome.checks_refused == 1 and len(runs) == 1
    assert "`loc(image, 'big cylinders')`" in llm.calls[1][-1]["content"]
