"""A distilled or group-written helper whose body always applies one claim says it in its name."""

from dataclasses import dataclass

import pytest

from vadar.library.candidates import Candidate, Route
from vadar.library.gate import SaysWhatItFixes
from vadar.library.problems import NameProblem


@dataclass(frozen=True)
class Helper:
    name: str
    signature: str
    code: str = ""


LIBRARY = [
    Helper("_same_color", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool"),
    Helper("_same_material", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool"),
    Helper("_color_of_object", "(image: Image, bbox: BBox) -> str"),
    Helper("_shape_of_object", "(image: Image, bbox: BBox) -> str"),
    Helper("_objects_left_of", "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]"),
    Helper("_objects_behind", "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]"),
    Helper("_count_things", "(image: Image, object_prompt: str) -> int"),  # claims nothing
]

# the body of a helper a CLEVR build distilled and admitted under a name that does not say color
SAME_COLOR = ("    return [box for box in loc(image, object_prompt) if not same_object(image, box, bbox2) "
              "and _same_color(image, box, bbox2)]")


def candidate(name: str, body: str) -> Candidate:
    code = f"def {name}(image, bbox2, object_prompt):\n{body}\n"
    return Candidate(Route.DISTILLED, name, "(image, bbox2, object_prompt)", "...", code)


def test_a_body_that_always_tests_one_shared_attribute_must_name_it():
    problem = SaysWhatItFixes(LIBRARY)(candidate("_filter_objects", SAME_COLOR))
    assert isinstance(problem, NameProblem)
    assert "`_same_color` (attribute color)" in problem.log and "does not say color" in problem.log
    assert "Put color in the name" in problem.log
    assert SaysWhatItFixes(LIBRARY)(candidate("_objects_same_color", SAME_COLOR)) is None
    assert SaysWhatItFixes(LIBRARY)(candidate("_same_colour_matches", SAME_COLOR)) is None  # either spelling


@pytest.mark.parametrize(("name", "body", "says"), [
    ("_count_related", "    return len(_objects_left_of(image, bbox2, loc(image, object_prompt)))", "left"),
    ("_is_related", "    return bool(_objects_behind(image, bbox2, loc(image, object_prompt)))", "behind"),
    ("_read_object", "    return _shape_of_object(image, loc(image, object_prompt)[0])", "shape"),
])
def test_one_relation_or_one_attribute_read_must_be_named_too(name, body, says):
    problem = SaysWhatItFixes(LIBRARY)(candidate(name, body))
    assert problem is not None and f"does not say {says}" in problem.log


def test_a_body_that_picks_among_several_of_a_kind_fixes_none():
    picked = ("    read = {'color': _color_of_object, 'shape': _shape_of_object}[object_prompt]\n"
              "    return read(image, bbox2)")
    assert SaysWhatItFixes(LIBRARY)(candidate("_attribute_of", picked)) is None
    both = "    return _objects_left_of(image, bbox2, _objects_behind(image, bbox2, loc(image, object_prompt)))"
    assert SaysWhatItFixes(LIBRARY)(candidate("_along_chain", both)) is None


def test_helpers_that_claim_nothing_and_modules_ask_for_nothing():
    assert SaysWhatItFixes(LIBRARY)(candidate("_how_many", "    return _count_things(image, object_prompt)")) is None
    assert SaysWhatItFixes(LIBRARY)(candidate("_boxes", "    return loc(image, object_prompt)")) is None


def test_one_attribute_tested_and_the_others_read_is_a_pick_not_a_fixed_one():
    # a shape helper a CLEVR build admitted: `_same_size` for size, the readers for the other three
    picked = ("    if object_prompt == 'size':\n        return _same_size(image, bbox2, bbox2)\n"
              "    if object_prompt == 'color':\n        return _color_of_object(image, bbox2)\n"
              "    return _shape_of_object(image, bbox2)")
    library = [*LIBRARY, Helper("_same_size", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool")]
    assert SaysWhatItFixes(library)(candidate("_count_same_attribute", picked)) is None


def test_what_a_library_helper_fixes_passes_to_the_helpers_built_on_it():
    # the next build distilled `_find_object` on a helper whose name said its color; its own did not
    by_color = Helper("_filter_objects_by_color", "(image: Image, bbox2: BBox, object_prompt: str) -> list[BBox]",
                      f"def _filter_objects_by_color(image, bbox2, object_prompt):\n{SAME_COLOR}\n")
    read = "    return vqa(image, 'What shape is it?', _filter_objects_by_color(image, bbox2, object_prompt)[0])"
    problem = SaysWhatItFixes([*LIBRARY, by_color])(candidate("_find_object", read))
    assert problem is not None and "`_filter_objects_by_color` (attribute color)" in problem.log
    assert SaysWhatItFixes([*LIBRARY, by_color])(candidate("_find_same_color_object", read)) is None


def test_helpers_calling_each_other_in_a_cycle_end():
    first = Helper("_first", "(image: Image) -> int", "def _first(image):\n    return _second(image)\n")
    second = Helper("_second", "(image: Image) -> int",
                    "def _second(image):\n    return _first(image) + len(_objects_behind(image, None, []))\n")
    problem = SaysWhatItFixes([*LIBRARY, first, second])(candidate("_count_it", "    return _first(image)"))
    assert problem is not None and "`_first` (relation behind)" in problem.log
