"""The objects a question's spatial relation chains name, innermost first."""

from __future__ import annotations

import pytest

from vadar.programs.relation_chain import find_order, plan_text


def order(question: str) -> str:
    """The parse, compactly: each object with its relations to earlier ones by number."""
    found = find_order(question)
    number = {id(f): i for i, f in enumerate(found, 1)}
    lines = [f"{i}. the {f.phrase}" + "".join(f"{' and' if k else ''} {r} ({number[id(o)]})"
                                                for k, (r, o) in enumerate(f.relations))
             for i, f in enumerate(found, 1)]
    return "\n".join(lines) or None


def test_a_chain_is_found_from_its_innermost_object_out():
    assert order("What material is the cylinder on the left side of the matte cylinder that is on the right side "
                     "of the metallic cube that is behind the tiny yellow thing?") == (
        "1. the tiny yellow thing\n2. the metallic cube behind (1)\n3. the matte cylinder right of (2)\n"
        "4. the cylinder left of (3)")


def test_it_is_the_object_the_there_is_clause_introduced():
    assert order("There is a small blue metallic cylinder; how many purple rubber things are left of it?") == (
        "1. the small blue metallic cylinder\n2. the purple rubber things left of (1)")
    # the clause's own chain comes first, and the question asks about its outermost object
    assert order("There is a metallic object in front of the red metal thing; what number of blue matte "
                     "cylinders are behind it?") == (
        "1. the red metal thing\n2. the metallic object in front of (1)\n3. the blue matte cylinders behind (2)")
    assert order("There is a big rubber thing that is right of the big rubber object that is in front of the "
                     "large blue rubber object; what is its shape?").endswith("3. the big rubber thing right of (2)")


def test_both_relations_of_one_object_pick_it_together():
    assert order("How many things are both to the right of the small brown cube and behind the small rubber "
                     "cylinder?") == ("1. the small brown cube\n2. the small rubber cylinder\n"
                                      "3. the things right of (1) and behind (2)")
    assert order("The thing that is behind the large cube and in front of the large ball has what shape?") \
        .endswith("3. the thing behind (1) and in front of (2)")


def test_two_objects_compared_each_have_their_chain():
    plan = order("Is the number of matte cylinders behind the small red matte cylinder less than the number of "
                     "green shiny objects?")
    assert plan == "1. the small red matte cylinder\n2. the matte cylinders behind (1)"  # 'less' is no noun
    assert order("Do the ball behind the small yellow sphere and the metal sphere that is to the left of the "
                     "yellow cylinder have the same size?") == (
        "1. the small yellow sphere\n2. the ball behind (1)\n3. the yellow cylinder\n4. the metal sphere left of (3)")


@pytest.mark.parametrize("question", [
    "How many cylinders are there?",
    "What color is the small cylinder?",
    "Is the lamp closer to the desk than to the blue chair?",
    "How many objects are to the left?",  # a relation without an object to be found from
])
def test_a_question_without_a_chain_gets_no_plan(question):
    assert plan_text(question) is None and find_order(question) == []


def test_the_plan_names_each_loc_call_and_leaves_the_relations_to_code():
    """Shown "3. the tiny thing behind (1) and left of (2)", static-api programs asked loc for the
    relation; each line now is the noun phrase's loc call and the relations that keep its boxes."""
    assert plan_text("How many tiny gray objects are left of the tiny green matte object that is behind the tiny "
                     "matte cube?") == (
        '1. loc(image, "tiny matte cube")[0]\n'
        '2. the first box of loc(image, "tiny green matte object") that is behind object 1\n'
        '3. the boxes of loc(image, "tiny gray objects") that are left of object 2')
    assert plan_text("The thing that is behind the large cube and in front of the large ball has what shape?") \
        .endswith('3. the boxes of loc(image, "thing") that are behind object 1 and in front of object 2')


def test_a_chain_s_extent_is_its_longest_walk_and_whether_an_object_has_two_relations():
    from vadar.programs.relation_chain import ChainExtent, chain_extent
    assert chain_extent("How many tiny gray objects are left of the tiny green matte object that is behind the tiny "
                        "matte cube that is behind the gray object?") == ChainExtent(3, False)
    # the `There is` clause's chain goes on through `it`
    assert chain_extent("There is a object behind the small blue cube; are there any green metallic objects left "
                        "of it?") == ChainExtent(2, False)
    assert chain_extent("What size is the object that is both on the left side of the big purple object and in "
                        "front of the gray metal object?") == ChainExtent(1, True)
    assert chain_extent("How many cubes are left of the ball?") == ChainExtent(1, False)
    assert chain_extent("How many cubes are there?") == ChainExtent(0, False)
