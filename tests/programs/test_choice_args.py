"""A literal word outside the values a helper's docstring lists is refused before the program runs,
with the listed value the word means; the box hint for a whole `loc` call; each message once."""

from __future__ import annotations

import pytest

from vadar.library.shape_helpers import CATALOGUE
from vadar.programs.api_text import render_api
from vadar.programs.call_checks import CALL_CHECKS, boxes_given, check_program
from vadar.programs.call_signatures import callable_api, documented_choices, read_signatures
from vadar.programs.choice_args import choices_given, meant_value
from vadar.programs.helper_rules import MODULE_NAMES

SHAPE_HELPERS = [helper for helper in CATALOGUE if helper.name in
                 {"_compare_counts", "_is_related", "_attribute_of", "_attribute_of_same", "_find_related",
                  "_objects_along"}]
API_TEXT = render_api(SHAPE_HELPERS)
API = callable_api(API_TEXT, {"image", *MODULE_NAMES, *(h.name for h in SHAPE_HELPERS)})


def messages(code, checks=(choices_given,)):
    return [problem.message for problem in check_program(code, API, checks)]


def test_the_catalogues_listed_values_are_read_from_the_api_text():
    signatures = read_signatures(API_TEXT)
    assert signatures["_compare_counts"].choices_of("order") == ("more", "fewer", "equal")
    assert signatures["_is_related"].choices_of("relation") == ("left", "right", "front", "behind")
    assert signatures["_attribute_of"].choices_of("attribute") == ("color", "shape", "material", "size")
    # Listed only where the values follow the parameter's name: "the `asked` attribute (...)" lists none.
    assert signatures["_attribute_of_same"].choices == ()
    assert signatures["_objects_along"].choices == ()
    assert signatures["loc"].choices == ()


def test_a_list_across_lines_and_a_list_of_two_are_read():
    text = "Which side: `side` ('left'\n    or 'right'); `order` ('a', 'b',\n  'c' or 'd')."
    assert documented_choices(text, ["side", "order"]) == (("side", ("left", "right")), ("order", ("a", "b", "c", "d")))
    assert documented_choices(text, ["side"]) == (("side", ("left", "right")),)
    assert documented_choices("`side` ('left')", ["side"]) == ()
    # a list left open gives examples, not the values
    for open_list in ("`side` ('left', 'right', ...)", "`side` ('left', 'right', 'front', ...)", "`side` ('left', 'right', etc.)", "`side` ('left' or 'right' or other words)",
                      "`side` ('left', 'right' and so on)"):
        assert documented_choices(open_list, ["side"]) == (), open_list
    assert documented_choices("`side` ('left' or 'right', as seen from the camera)", ["side"]) == (("side", ("left", "right")),)


@pytest.mark.parametrize(("word", "meant"), [
    ("less", "fewer"), ("greater", "more"), ("same", "equal"), ("larger", "more"),
])
def test_a_comparison_in_the_questions_word_is_refused_with_the_listed_one(word, meant):
    found = messages(f'final_result = "yes" if _compare_counts(image, loc(image, "cubes"), '
                     f'loc(image, "balls"), "{word}") else "no"')
    assert found == [f"line 1: `_compare_counts(order={word!r})`: `order` is one of 'more', 'fewer' or 'equal', "
                     f"and {word!r} is none of them; write {meant!r}."]


def test_listed_values_and_values_the_program_computes_pass():
    assert messages('final_result = _compare_counts(image, loc(image, "cubes"), loc(image, "balls"), "fewer")') == []
    assert messages('order = "less"\nfinal_result = _compare_counts(image, [], [], order)') == []
    assert messages('cube = loc(image, "cube")[0]\nball = loc(image, "ball")[0]\n'
                    'final_result = _is_related(image, cube, "front", ball)') == []


@pytest.mark.parametrize(("word", "meant"), [
    ("in front of", "front"), ("to the left of", "left"), ("Behind", "behind"),
])
def test_a_relation_phrase_is_refused_with_the_value_it_holds(word, meant):
    found = messages(f'ball = loc(image, "ball")[0]\ncube = _find_related(image, "cube", "{word}", ball)')
    assert len(found) == 1 and found[0].endswith(f"write {meant!r}.")


def test_a_keyword_argument_and_an_attribute_spelling():
    found = messages('box = loc(image, "cube")[0]\nfinal_result = _attribute_of(image, box=box, attribute="colour")')
    assert found == ["line 2: `_attribute_of(attribute='colour')`: `attribute` is one of 'color', 'shape', "
                     "'material' or 'size', and 'colour' is none of them; write 'color'."]


def test_a_word_of_no_clear_value_is_told_the_list():
    found = messages('final_result = _compare_counts(image, [], [], "different")')
    assert found[0].endswith("write the one that means what the question asks.")
    assert meant_value("left or right", ("left", "right", "front", "behind")) is None


def test_a_whole_loc_call_where_one_box_goes_is_told_to_take_its_first_box():
    found = messages('final_result = _is_related(image, loc(image, "cube")[0], "left", loc(image, "small ball"))',
                     (boxes_given,))
    assert len(found) == 1 and found[0].endswith("take one box of the list: `loc(image, 'small ball')[0]`.")


def test_two_alike_mistakes_on_one_line_are_told_once():
    code = ('final_result = _compare_counts(image, [_find_related(image, "cube", "left", loc(image, "ball"))], '
            '[_find_related(image, "cube", "left", loc(image, "ball"))], "more")')
    found = messages(code, CALL_CHECKS)
    assert len(found) == 1 and "`_find_related(reference=...)` gets a list of boxes" in found[0]
