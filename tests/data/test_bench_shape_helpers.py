"""The generated benchmark's question-shape helpers, done as their catalogue docstrings say, answer
their families' questions on generated scenes with the oracle modules: the hints are the
benchmark's own conventions, so a body that follows its docstring is right."""

import math
import re

import pytest

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from omni3d_bench.metrics import score_answer  # noqa: E402
from vadar.library.shape_helpers import helpers_for, shape_helper  # noqa: E402


def height(m, image, box):  # HEIGHT_HOW
    return (box[3] - box[1]) * m.depth(image, box) / image.focal_length


def centre(m, image, box):  # CENTRE_HOW
    d = m.depth(image, box)
    return (((box[0] + box[2]) / 2 - image.width / 2) * d / image.focal_length,
            ((box[1] + box[3]) / 2 - image.height / 2) * d / image.focal_length, d)


def near(m, image, a, b):
    return math.dist(centre(m, image, a), centre(m, image, b))


def neighbour_height(m, image, side, ref):
    x = (ref[0] + ref[2]) / 2
    on_side = [b for b in m.loc(image, "objects") if b != ref and ((b[0] + b[2]) / 2 < x) == (side == "left")]
    return height(m, image, min(on_side, key=lambda b: abs((b[0] + b[2]) / 2 - x)))


def nearest_color(m, image, ref):
    others = [b for b in m.loc(image, "objects") if b != ref]
    return m.vqa(image, "What color is this object?", min(others, key=lambda b: near(m, image, ref, b)))


# each family: the catalogue helper its shape gets, the question's noun phrases, and the body its docstring asks for
FAMILIES = {
    "size_ratio": ("_height_ratio", r"How many times taller is the (.+) than the (.+)\?",
                   lambda m, i, a, b: height(m, i, a) / height(m, i, b)),
    "fit_count": ("_stack_count", r"How many \w+ as tall as the (.+) could be stacked on top of each other "
                  r"within the height of the (.+)\?", lambda m, i, u, w: math.floor(height(m, i, w) / height(m, i, u))),
    "depth_difference": ("_depth_difference", r"How much farther from the camera is the (.+) than the (.+), in meters\?",
                         lambda m, i, a, b: m.depth(i, a) - m.depth(i, b)),
    "multi_step_height": ("_height_of_neighbour", r"How tall, in meters, is the object immediately to the left "
                          r"of the (.+)\?", lambda m, i, r: neighbour_height(m, i, "left", r)),
    "multi_step_color": ("_attribute_of_nearest", r"What color is the object closest to the (.+)\?", nearest_color),
    "yes_no": ("_is_closer_to", r"Is the (.+) closer to the (.+) than to the (.+)\?",
               lambda m, i, a, b, c: "yes" if near(m, i, a, b) < near(m, i, a, c) else "no"),
}


# what a body following the docstring scores at least: exact for depths, attributes and distances;
# a height read off a 2D box comes close, not exactly (the box spans the top face too), so ratios of two
# such heights, and the counts and neighbours built on them, score what the modules allow (measured
# on these scenes: size ratio 0.55, fit count 0.58, neighbour's height 0.66)
FLOORS = {"depth_difference": 1.0, "multi_step_color": 1.0, "yes_no": 1.0,
          "size_ratio": 0.5, "fit_count": 0.5, "multi_step_height": 0.6}


def family_scores(bench, family, body=None):
    dataset, modules = bench
    name, pattern, rule = FAMILIES[family]
    scores = []
    for question in dataset.questions("test"):
        asked = re.fullmatch(pattern, question.question)
        if question.family != family or asked is None:
            continue
        assert [h.name for h in helpers_for(question.question)] == [name]
        image = dataset.image(question)
        boxes = [modules.loc(image, phrase)[0] for phrase in asked.groups()]
        scores.append(score_answer((body or rule)(modules, image, *boxes), str(question.answer),
                                   question.answer_type, question.metric))
    assert len(scores) >= 2, family
    return scores


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_body_following_the_docstring_answers_the_family(bench, family):
    scores = family_scores(bench, family)
    assert sum(scores) / len(scores) >= FLOORS[family], (family, scores)
    assert shape_helper(FAMILIES[family][0]) is not None


def test_the_ratio_the_docstring_asks_for_beats_the_difference_programs_wrote(bench):
    """12 of 20 size-ratio programs subtracted two right heights: the docstring says ratio, never difference."""
    difference = family_scores(bench, "size_ratio", lambda m, i, a, b: height(m, i, a) - height(m, i, b))
    ratio = family_scores(bench, "size_ratio")
    assert sum(difference) / len(difference) <= 0.2 < sum(ratio) / len(ratio) - 0.3


def test_a_measure_the_helper_is_not_about_gets_no_helper():
    assert helpers_for("How many times wider is the table than the chair?") == ()
    assert [h.name for h in helpers_for("How many times taller is the table than the chair?")] == ["_height_ratio"]


RIGHT_BODIES = '''
def _h(image: Image, box: BBox) -> float:
    """Height in metres from the box, its depth and the focal length."""
    return (box[3] - box[1]) * depth(image, box) / image.focal_length


def _centre(image: Image, box: BBox) -> list:
    """The box's 3D centre."""
    d = depth(image, box)
    return [((box[0] + box[2]) / 2 - image.width / 2) * d / image.focal_length,
            ((box[1] + box[3]) / 2 - image.height / 2) * d / image.focal_length, d]


def _apart(image: Image, a: BBox, b: BBox) -> float:
    """Metres between two centres."""
    return math.dist(_centre(image, a), _centre(image, b))


def _height_ratio(image: Image, first: BBox, second: BBox) -> float:
    """Ratio."""
    return _h(image, first) / _h(image, second)


def _stack_count(image: Image, unit: BBox, whole: BBox) -> int:
    """Fit."""
    return math.floor(_h(image, whole) / _h(image, unit))


def _depth_difference(image: Image, first: BBox, second: BBox) -> float:
    """Difference of depths."""
    return depth(image, first) - depth(image, second)


def _height_of_neighbour(image: Image, side: str, reference: BBox) -> float:
    """The neighbour's height."""
    x = (reference[0] + reference[2]) / 2
    beside = [b for b in loc(image, "objects") if ((b[0] + b[2]) / 2 < x if side == "left" else (b[0] + b[2]) / 2 > x)]
    return _h(image, min(beside, key=lambda b: abs((b[0] + b[2]) / 2 - x)))


def _attribute_of_nearest(image: Image, attribute: str, description: str, reference: BBox) -> str:
    """The nearest one's attribute."""
    others = [b for b in loc(image, description) if not same_object(image, b, reference)]
    nearest = min(others, key=lambda b: _apart(image, b, reference))
    return vqa(image, f"What {attribute} is this object?", nearest)


def _is_closer_to(image: Image, box: BBox, first: BBox, second: BBox) -> bool:
    """Closer to first."""
    return _apart(image, box, first) < _apart(image, box, second)
'''


def truth_check(bench, tmp_path, source, name):
    from api_store import ApiStore
    from vadar.library.hand import add_functions
    from vadar.library.truth_checks import TruthChecks
    from vadar.sandbox import execute

    dataset, modules = bench
    with ApiStore(tmp_path / f"{name}.sqlite") as store:
        add_functions(store, source)
        return TruthChecks(lambda code, ns: execute(code, ns, timeout_s=10)).check(
            store.current(name), store.functions(), dataset, modules, dataset.questions("test"))


@pytest.mark.parametrize("name", ["_height_ratio", "_stack_count", "_depth_difference", "_height_of_neighbour",
                                  "_attribute_of_nearest", "_is_closer_to"])
def test_ground_truth_confirms_a_body_that_follows_the_docstring(bench, tmp_path, name):
    result = truth_check(bench, tmp_path, RIGHT_BODIES, name)
    assert result.claim == f"question shape {name}" and result.passed is True, (result.credit, result.failures)
    assert result.cases >= 4


@pytest.mark.parametrize("name, right, wrong", [
    ("_height_ratio", "return _h(image, first) / _h(image, second)", "return _h(image, first) - _h(image, second)"),
    ("_height_of_neighbour", "return _h(image, min(beside", "return _h(image, max(beside"),  # the farthest
    ("_depth_difference", "return depth(image, first) - depth(image, second)",
     "return depth(image, second) - depth(image, first)"),
    ("_is_closer_to", "return _apart(image, box, first) < _apart(image, box, second)",
     "return _apart(image, box, first) > _apart(image, box, second)"),
])
def test_ground_truth_refuses_a_wrong_body(bench, tmp_path, name, right, wrong):
    assert right in RIGHT_BODIES
    result = truth_check(bench, tmp_path, RIGHT_BODIES.replace(right, wrong), name)
    assert result.passed is False and "but the truth is" in result.failures[0]


def test_a_fit_count_dividing_pixel_heights_fails_ground_truth(bench, tmp_path):
    # cases are those the boxes read within 15%, where the floor of the read ratio is the truth's
    pixels = RIGHT_BODIES.replace("return math.floor(_h(image, whole) / _h(image, unit))",
                                  "return math.floor((whole[3] - whole[1]) / (unit[3] - unit[1]))")
    assert pixels != RIGHT_BODIES
    result = truth_check(bench, tmp_path, pixels, "_stack_count")
    assert result.passed is False and "but the truth is" in result.failures[0]


def test_the_truth_s_nearest_and_neighbour_are_the_generator_s(bench):
    from omni3d_bench.generator.questions import left_neighbour, nearest
    from omni3d_bench.relations import nearest_object, neighbour_object

    dataset, _ = bench
    for image_id in {q.image_id for q in dataset.questions("test")}:
        scene = dataset.scene(image_id)
        objects = scene["objects"]
        for i, o in enumerate(objects):
            found, left = nearest(o, objects), left_neighbour(o, objects)
            assert nearest_object(scene, i) == (None if found is None else objects.index(found))
            assert neighbour_object(scene, i, "left") == (None if left is None else objects.index(left))
