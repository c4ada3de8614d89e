"""Each call check alone, on small programs: what it refuses, and what it must leave alone."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from vadar.programs.api_text import render_api
from vadar.programs.call_checks import (
    CALL_CHECKS,
    argument_counts,
    box_lists_given,
    boxes_given,
    check_program,
    redefined_api,
    relations_to_loc,
    uncalled_functions,
    unknown_functions,
    unused_results,
)
from vadar.programs.call_signatures import Kind, annotation_kind, callable_api, read_signatures
from vadar.programs.helper_rules import MODULE_NAMES


@dataclass(frozen=True)
class Helper:
    name: str
    signature: str
    docstring: str


HELPERS = [
    Helper("_is_left_of", "(image: Image, bbox: BBox, reference: BBox) -> bool", "Whether bbox is left of reference."),
    Helper("_objects_left_of", "(image: Image, reference: BBox) -> list[BBox]", "Every object left of reference."),
    Helper("_objects_behind", "(image: Image, reference: BBox) -> list[BBox]", "Every object behind reference."),
    Helper("_count_matching", "(image: Image, description: str, limit: int = 10) -> int", "How many match."),
    Helper("_count_either", "(image: Image, first: list[BBox], second: list[BBox]) -> int", "How many in either."),
    Helper("_find_related", "(image: Image, description: str, relation: str, reference: BBox) -> BBox", "One box."),
]
API_TEXT = render_api(HELPERS)
API = callable_api(API_TEXT, {"image", *MODULE_NAMES, *(h.name for h in HELPERS)})


def problems(code, check=None):
    return check_program(code, API, [check] if check else CALL_CHECKS)


CORRECT = """\
cubes = loc(image, "red cube")
sphere = loc(image, "sphere")[0]
left = _objects_left_of(image, sphere)
count = 0
for cube in cubes:
    if _is_left_of(image, cube, sphere) and depth(image, cube) < depth(image, sphere):
        count += 1
width, height = get_2D_object_size(image, sphere)
final_result = count + len(left) + _count_matching(image, "cube", limit=3)
"""


def test_a_correct_program_passes_every_check():
    assert problems(CORRECT) == []


def test_signatures_are_read_from_the_api_text_with_their_annotations():
    signatures = read_signatures(API_TEXT)
    assert {"loc", "depth", "vqa", "same_object", "get_2D_object_size", "_is_left_of"} <= signatures.keys()
    left = signatures["_is_left_of"]
    assert left.helper and not signatures["loc"].helper
    assert left.annotation("reference") == "BBox" and left.returns == "bool"
    assert left.text == "_is_left_of(image: Image, bbox: BBox, reference: BBox) -> bool"
    assert annotation_kind(signatures["loc"].returns) is Kind.BOXES


def test_a_bool_from_a_helper_passed_as_a_box_names_the_helper_the_argument_and_the_line():
    code = ("cube = loc(image, 'cube')[0]\nsphere = loc(image, 'sphere')[0]\n"
            "x = _is_left_of(image, cube, sphere)\nfinal_result = len(_objects_left_of(image, x))\n")
    [problem] = problems(code, boxes_given)
    assert problem.line == 4
    assert problem.message.startswith(
        "line 4: `_objects_left_of(reference=...)` gets a bool from `_is_left_of` at line 3; "
        "`reference` needs one box [x_min, y_min, x_max, y_max]")


@pytest.mark.parametrize("argument, said", [
    ("loc(image, 'cube')", "a list of boxes from `loc`"),
    ("cubes", "a list of boxes from `loc` at line 1; `bbox` needs one box [x_min, y_min, x_max, y_max]: "
              "take one box of the list (for example `cubes[0]`)"),
    ("3", "a number (`3`, line 2)"),
    ("'cube'", "a string (`'cube'`, line 2)"),
    ("depth(image, cubes[0]) > 2", "a bool (a comparison, line 2)"),
    ("[1, 2]", "a list of 2 items (line 2)"),
])
def test_values_that_are_no_box_are_refused_where_a_box_goes(argument, said):
    [problem] = problems(f"cubes = loc(image, 'cube')\nfinal_result = depth(image, {argument})\n", boxes_given)
    assert said in problem.message and "`depth(bbox=...)`" in problem.message


@pytest.mark.parametrize("code", [
    "box = loc(image, 'cube')\nbox = box[0]\nfinal_result = depth(image, box)\n",  # reassigned: unknown
    "final_result = depth(image, [1, 2, 30, 40])\n",  # four numbers are a box
    "for box in loc(image, 'cube'):\n    final_result = depth(image, box)\n",
    "def _is_left_of(a, b):\n    return a\nx = _is_left_of(1, 2)\nfinal_result = depth(image, x)\n",  # the program's own
    "final_result = depth(image, region(0))\n",
    "final_result = _count_matching(image, 'cube', 3)\n",  # an int where an int goes
])
def test_values_the_program_does_not_make_certain_are_never_blamed(code):
    assert problems(code, boxes_given) == []


@pytest.mark.parametrize("call, reason", [
    ("_is_left_of(image, box)", "missing a required argument: 'reference'"),
    ("depth(image, box, box)", "too many positional arguments"),
    ("loc(image, 'cube', name='cube')", "got an unexpected keyword argument 'name'"),
])
def test_argument_counts_against_the_signature(call, reason):
    [problem] = problems(f"box = loc(image, 'cube')[0]\nfinal_result = {call}\n", argument_counts)
    assert reason in problem.message and problem.line == 2
    assert "does not fit `" in problem.message


def test_defaults_keywords_and_starred_calls_fit():
    code = ("box = loc(image, 'cube')[0]\nargs = [image, box]\na = depth(*args)\n"
            "b = _count_matching(image, description='cube')\nc = _is_left_of(image, reference=box, bbox=box)\n"
            "final_result = (a, b, c)\n")
    assert problems(code, argument_counts) == []


def test_an_unknown_helper_gets_the_nearest_existing_names():
    [problem] = problems("box = loc(image, 'cube')[0]\nfinal_result = _is_behind_of(image, box)\n",
                         unknown_functions)
    assert problem.message.startswith("line 2: `_is_behind_of` does not exist")
    assert "`_objects_behind(image: Image, reference: BBox) -> list[BBox]`" in problem.message
    assert "nearest existing names are `_is_left_of(" in problem.message


def test_builtins_the_namespace_and_the_programs_own_functions_are_known():
    code = ("import math\ndef near(a, b):\n    return abs(a - b) < 1\n"
            "f = lambda v: v\nfinal_result = near(f(len([1])), math.sqrt(round(2.0))) and sorted([1]) == [1]\n")
    assert problems(code, unknown_functions) == []
    [problem] = problems("final_result = count_cubes(image)\n", unknown_functions)
    assert "call only the functions listed in the API" in problem.message


def test_a_helper_result_never_used_is_refused_but_a_module_result_is_not():
    code = ("box = loc(image, 'cube')[0]\nleft = _is_left_of(image, box, box)\n_objects_behind(image, box)\n"
            "d = depth(image, box)\nfinal_result = _count_matching(image, 'cube')\n")
    found = problems(code, unused_results)
    assert [p.line for p in found] == [2, 3]
    assert "`left` gets the result of `_is_left_of` and is never read" in found[0].message
    assert "the result of `_objects_behind(image, box)` is thrown away" in found[1].message


@pytest.mark.parametrize("phrase, word", [
    ("cube left of the sphere", "left of"),
    ("object in front of the cylinder", "in front of"),
    ("thing behind the red ball", "behind"),
    ("object closest to the camera", "closest"),
    ("ball that is the same color as the cube", "same color as"),
])
def test_a_relational_phrase_given_to_loc_is_refused(phrase, word):
    [problem] = problems(f"final_result = len(loc(image, {phrase!r}))\n", relations_to_loc)
    assert f"({word!r})" in problem.message and "loc finds objects by a noun phrase only" in problem.message


@pytest.mark.parametrize("phrase", ["red cube", "small metal sphere", "objects", "frontal lamp", "left shoe"])
def test_plain_noun_phrases_pass_loc(phrase):
    assert problems(f"final_result = loc(image, object_prompt={phrase!r})\n", relations_to_loc) == []


def test_keyword_prompts_to_loc_are_checked_too():
    assert problems("final_result = loc(image, object_prompt='cube next to the ball')\n", relations_to_loc)


def test_code_that_does_not_parse_is_left_to_the_sandbox():
    assert problems("final_result = (\n") == []


def test_a_size_pair_passed_where_a_box_goes_is_caught():
    program = ("sphere = loc(image, 'metal sphere')[0]\nsize = get_2D_object_size(image, sphere)\n"
               "final_result = _is_left_of(image, sphere, size)\n")
    found = problems(program, boxes_given)
    assert len(found) == 1 and "a pair of numbers from `get_2D_object_size`" in found[0].message
    assert "reference" in found[0].message


def test_a_program_that_writes_out_an_api_function_instead_of_calling_it_is_refused():
    pasted = ('def _count_matching(image: Image, description: str, limit: int = 10) -> int:\n'
              '    """How many match."""\n    return len(loc(image, description))\n')
    [problem] = problems(pasted, redefined_api)
    assert problem.message.startswith("line 1: the program defines `_count_matching`, which the API already has")
    assert "call `_count_matching(image: Image, description: str, limit: int=10) -> int`" in problem.message
    [module] = problems("def depth(image, bbox):\n    return 1.0\nfinal_result = depth(image, None)\n", redefined_api)
    assert "`depth`" in module.message
    # a function of the program's own, under a new name, is its business
    assert problems("def near(a, b):\n    return abs(a - b) < 1\nfinal_result = near(1, 2)\n", redefined_api) == []


@pytest.mark.parametrize("argument, said", [
    ("'small spheres'", "a string (`'small spheres'`, line 3); `second` needs a list of boxes: find its objects first"),
    ("ball", "a box from `_find_related` at line 2; `second` needs a list of boxes: the objects to choose among or "
             "count, as loc or a helper returns them (for example `loc(image, 'cubes')`); for that one object alone, "
             "`[ball]`"),
    ("loc(image, 'ball')[0]", "a box (item 0 of a list of boxes from `loc` at line 3); `second` needs a list of boxes"),
    ("3", "a number (`3`, line 3)"),
])
def test_a_phrase_or_one_box_where_a_list_of_boxes_goes_is_refused(argument, said):
    code = ("cube = loc(image, 'cube')[0]\nball = _find_related(image, 'ball', 'left', cube)\n"
            f"final_result = _count_either(image, loc(image, 'cubes'), {argument})\n")
    [problem] = problems(code, box_lists_given)
    assert said in problem.message and problem.message.startswith("line 3: `_count_either(second=...)`")


@pytest.mark.parametrize("argument", ["loc(image, 'spheres')", "_objects_left_of(image, cube)", "[ball]",
                                      "[b for b in loc(image, 'spheres') if depth(image, b) > 1]"])
def test_lists_of_boxes_pass_where_a_list_of_boxes_goes(argument):
    code = ("cube = loc(image, 'cube')[0]\nball = _find_related(image, 'ball', 'left', cube)\n"
            f"final_result = _count_either(image, loc(image, 'cubes'), {argument})\n")
    assert problems(code, box_lists_given) == []


@pytest.mark.parametrize("line", [
    'final_result = "left" if _is_left_of else "right"',
    "final_result = 1 if not _is_left_of else 0",
    "final_result = _is_left_of",
    "if _is_left_of and True:\n    final_result = 1",
    "final_result = _is_left_of == True",
])
def test_a_function_tested_or_answered_without_being_called_is_refused(line):
    """A warehouse program: `is_left(image, box_0, pallet_0)` thrown away, then `"left" if is_left else
    "right"`, always "left" (right by chance, it became a worked example)."""
    [problem] = problems(line + "\n", uncalled_functions)
    assert problem.line == 1 and problem.check == "uncalled_functions"
    assert "`_is_left_of` is a function that is never called here" in problem.message
    assert "_is_left_of(image: Image, bbox: BBox, reference: BBox) -> bool" in problem.message


def test_functions_called_or_handed_on_pass_the_uncalled_check():
    code = ('box = loc(image, "cube")[0]\nleft = _is_left_of(image, box, box)\n'
            'pick = {"left": _objects_left_of, "behind": _objects_behind}["left"]\n'
            'final_result = "left" if left else len(pick(image, box))\n')
    assert problems(code, uncalled_functions) == []
    assert problems("_is_left_of = 3\nfinal_result = _is_left_of\n", uncalled_functions) == []  # the program's own


def test_a_returned_value_is_held_to_the_kind_its_signature_promises():
    from vadar.programs.call_signatures import return_mismatch
    boxes = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    assert return_mismatch("(image: Image) -> int", boxes) == (
        "a list of boxes, but its signature promises a number (`-> int`)")
    assert return_mismatch("(image: Image) -> BBox", boxes) == "a list of boxes, but its signature promises a box (`-> BBox`)"
    assert return_mismatch("(image: Image) -> str", True) == "a bool, but its signature promises a string (`-> str`)"
    # what passes: the promised kind, any number for int or float, None, empty lists, unannotated returns
    for signature, value in (("() -> int", 3), ("() -> float", 3), ("() -> int", 2.0), ("() -> bool", False),
                             ("() -> str", None), ("() -> list[BBox]", []), ("() -> list[BBox]", boxes),
                             ("() -> BBox", [1, 2, 3, 4]), ("()", boxes), ("() -> dict", boxes),
                             ("() -> list[BBox]", [[1, 2, 3, 4, 5, 6]]), ("() -> BBox", [])):
        assert return_mismatch(signature, value) is None, (signature, value)
