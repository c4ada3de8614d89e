"""Worked examples composed of the library's measure helpers, for metric questions no helper answers
whole: a program shown the call copies it instead of reading pixels off `get_2D_object_size`."""

from __future__ import annotations

from types import SimpleNamespace

from base_modules.module import PREDEFINED_MODULES
from vadar.library.composed_examples import fallback_example
from vadar.library.measure_examples import measure_example
from vadar.library.retrieval import ExampleRetriever
from vadar.programs.api_text import render_api
from vadar.programs.call_checks import check_program
from vadar.programs.call_signatures import callable_api
from vadar.programs.helper_rules import MODULE_NAMES, NAMESPACE_NAMES


def helper(name: str, signature: str):
    return SimpleNamespace(name=name, signature=signature, docstring="What the name says.", code="")


# As a 30-question build of a generated seed admitted them (docs/results/generated-seed2811/rebuild-c22e137)
HEIGHT = helper("_height_of_object", "(image: Image, bbox: BBox) -> float")
CAMERA = helper("_distance_from_camera", "(image: Image, bbox: BBox) -> float")
BETWEEN = helper("_distance_between", "(image: Image, bbox1: BBox, bbox2: BBox) -> float")
LEFT = helper("_objects_left_of", "(image: Image, bbox: BBox) -> list[BBox]")
RIGHT = helper("_objects_right_of", "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]")
LIBRARY = [HEIGHT, CAMERA, BETWEEN, LEFT, RIGHT]


def test_one_object_s_height_is_shown_the_height_helper_called():
    example = measure_example("How tall is the chair in meters?", LIBRARY)
    assert example is not None and example.question == "How tall is the lamp in meters?"
    assert example.code.splitlines() == ['lamp = loc(image, "lamp")[0]',
                                         "final_result = _height_of_object(image, lamp)"]


def test_a_height_ratio_divides_two_calls_of_the_height_helper():
    example = measure_example("How many times taller is the orange bin than the ball?", LIBRARY)
    assert example is not None
    assert example.code.splitlines()[-1] == "final_result = _height_of_object(image, lamp) / _height_of_object(image, box)"


def test_the_object_immediately_beside_a_reference_is_the_nearest_in_x_on_that_side():
    left = measure_example("How tall, in meters, is the object immediately to the left of the cabinet?", LIBRARY)
    assert left is not None and left.code.splitlines()[1:] == [
        "lefts = _objects_left_of(image, box)",
        "nearest = max(lefts, key=lambda b: (b[0] + b[2]) / 2)  # immediately left: nearest in x",
        "final_result = _height_of_object(image, nearest)"]
    right = measure_example("How tall, in meters, is the object immediately to the right of the mug?", LIBRARY)
    assert right is not None
    assert right.code.splitlines()[1] == 'rights = _objects_right_of(image, box, loc(image, "objects"))'
    assert right.code.splitlines()[2].startswith("nearest = min(rights,")


def test_distances_call_their_helpers():
    between = measure_example("What is the distance between the purple bin and the chair in meters?", LIBRARY)
    assert between is not None and between.code.splitlines()[-1] == "final_result = _distance_between(image, lamp, box)"
    camera = measure_example("How far is the chair from the camera, in meters?", LIBRARY)
    assert camera is not None and camera.code.splitlines()[-1] == "final_result = _distance_from_camera(image, lamp)"


def test_no_example_without_the_measure_s_helper_or_for_another_shape():
    assert measure_example("How tall is the chair in meters?", [CAMERA, BETWEEN]) is None
    assert measure_example("How tall, in meters, is the object immediately to the left of the cabinet?",
                           [HEIGHT]) is None  # no left helper
    assert measure_example("How many times wider is the table than the chair?", LIBRARY) is None
    assert measure_example("How much farther from the camera is the table than the mug, in meters?", LIBRARY) is None
    assert measure_example("How many chairs are there?", LIBRARY) is None


def test_every_measure_example_passes_the_program_checks():
    api = callable_api(render_api(LIBRARY, PREDEFINED_MODULES), {f.name for f in LIBRARY} | MODULE_NAMES | NAMESPACE_NAMES)
    for question in ["How tall is the chair in meters?", "How many times taller is the bin than the ball?",
                     "How tall, in meters, is the object immediately to the left of the cabinet?",
                     "How tall, in meters, is the object immediately to the right of the mug?",
                     "What is the distance between the bin and the chair in meters?",
                     "How far is the chair from the camera, in meters?"]:
        example = measure_example(question, LIBRARY)
        assert example is not None and check_program(example.code, api) == [], question


def test_a_height_question_without_right_programs_of_its_shape_is_shown_the_composed_example():
    names = {f.name for f in LIBRARY}
    assert fallback_example("How tall is the chair in meters?", names, LIBRARY) is not None
    rendered = ExampleRetriever([], 2, names, functions=LIBRARY).render("How tall is the chair in meters?")
    assert rendered is not None and "final_result = _height_of_object(image, lamp)" in rendered
