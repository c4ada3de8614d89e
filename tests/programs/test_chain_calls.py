"""A chain list compared with the question's chain before the program runs (`programs/chain_calls`)."""

from __future__ import annotations

from dataclasses import dataclass

from vadar.programs.api_text import render_api
from vadar.programs.call_checks import CALL_CHECKS, chain_lists, check_program
from vadar.programs.call_signatures import callable_api
from vadar.programs.chain_calls import chain_unwalked, question_chain
from vadar.programs.helper_rules import MODULE_NAMES


@dataclass(frozen=True)
class Helper:
    name: str
    signature: str
    docstring: str


ALONG = Helper("_objects_along", "(image: Image, chain: list[str]) -> list[BBox]", "The objects a chain picks.")
API = callable_api(render_api([ALONG]), {"image", *MODULE_NAMES, ALONG.name})

CHAINED = "What number of objects are on the right side of the cube behind the large yellow rubber object?"
THERE_IS = "There is a object behind the small blue cube; are there any green metallic objects left of it?"


def test_the_question_chain_is_read_outermost_first_with_the_there_is_clause_in_it():
    assert question_chain(CHAINED) == ["objects", "right", "cube", "behind", "large yellow rubber object"]
    assert question_chain(THERE_IS) == ["green metallic objects", "left", "object", "behind", "small blue cube"]
    assert question_chain("How many cubes are left of the sphere?") == ["cubes", "left", "sphere"]
    # no single list: two relations of one object, or no relation at all
    assert question_chain("What size is the thing that is both left of the yellow object and in front of the "
                          "large cylinder?") is None
    assert question_chain("How many red cubes are there?") is None


def test_a_chain_that_drops_the_outermost_relation_is_refused_with_the_questions_list():
    code = 'final_result = len(_objects_along(image, ["cube", "right", "large yellow rubber object"]))'
    [problem] = check_program(code, API, CALL_CHECKS, CHAINED)
    assert problem.check == "chain_lists" and problem.line == 1
    assert "it walks 'right', but the question's chain walks 'right', 'behind'" in problem.message
    assert "['objects', 'right', 'cube', 'behind', 'large yellow rubber object']" in problem.message


def test_a_chain_without_the_there_is_clause_or_in_another_order_is_refused():
    dropped = 'things = _objects_along(image, ["green metallic objects", "left", "small blue cube"])\n' \
              'final_result = "yes" if things else "no"'
    assert [p.check for p in check_program(dropped, API, [chain_lists], THERE_IS)] == ["chain_lists"]
    swapped = 'final_result = len(_objects_along(image, ["objects", "behind", "cube", "right", "large yellow rubber ' \
              'object"]))'
    assert len(check_program(swapped, API, [chain_lists], CHAINED)) == 1


def test_the_questions_chain_passes_in_any_wording_of_its_relations_and_phrases():
    for chain in ('["objects", "right", "cube", "behind", "large yellow rubber object"]',
                  '["things", "to the right of", "cube", "behind", "big yellow matte thing"]',
                  '["object", "on the right side of", "block", "behind", "yellow object"]'):
        code = f"final_result = len(_objects_along(image, {chain}))"
        assert check_program(code, API, CALL_CHECKS, CHAINED) == [], chain


def test_what_the_check_cannot_be_sure_of_is_never_blamed():
    one = 'final_result = len(_objects_along(image, ["cube", "right", "large yellow rubber object"]))'
    # no question given, a chain held in a variable, a branched question: nothing said
    assert check_program(one, API, [chain_lists]) == []
    held = 'chain = ["cube", "right", "thing"]\nfinal_result = len(_objects_along(image, chain))'
    assert check_program(held, API, [chain_lists], CHAINED) == []
    both = "What size is the thing that is both left of the yellow object and in front of the large cylinder?"
    assert check_program('final_result = _objects_along(image, ["thing", "left", "yellow object"])',
                         API, [chain_lists], both) == []
    # a list of another parameter name or type is not a chain
    other = callable_api(render_api([Helper("_count_all", "(image: Image, words: list[str]) -> int", "Count.")]),
                         {"image", *MODULE_NAMES, "_count_all"})
    assert check_program('final_result = _count_all(image, ["cube"])', other, [chain_lists], CHAINED) == []


def test_a_chained_question_answered_without_the_chain_helper_is_refused_with_its_call():
    composed = ('cube = loc(image, "cube")[0]\n'
                'final_result = len([b for b in loc(image, "objects") if b[0] > cube[2]])')
    [problem] = check_program(composed, API, (chain_unwalked,), CHAINED)
    assert problem.check == "chain_unwalked"
    assert "chains 2 relations ('right', 'behind')" in problem.message
    assert "`_objects_along(image, ['objects', 'right', 'cube', 'behind', 'large yellow rubber object'])`" in problem.message


def test_the_chain_helper_called_one_relation_or_no_chain_helper_needs_no_walk():
    called = 'final_result = len(_objects_along(image, ["objects", "right", "cube", "behind", "large yellow rubber object"]))'
    assert check_program(called, API, (chain_unwalked,), CHAINED) == []
    one = "How many cubes are left of the sphere?"
    assert check_program('final_result = len(loc(image, "cubes"))', API, (chain_unwalked,), one) == []
    without = callable_api(render_api([]), {"image", *MODULE_NAMES})  # a library with no chain helper
    assert check_program('final_result = len(loc(image, "objects"))', without, (chain_unwalked,), CHAINED) == []
