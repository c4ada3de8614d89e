"""Ground truth checks a question-shape helper on every value of its relation or attribute parameter:
outcomes on a batch's questions cannot see a branch no question took."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api_store import ApiStore
from omni3d_bench.datasets.clevr import ClevrDataset
from vadar.library.hand import add_functions
from vadar.library.shape_helpers import CATALOGUE
from vadar.library.shape_truth import CASES
from vadar.library.truth_case import ShapeCase, judge_shape_case
from vadar.library.truth_checks import TruthChecks
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
BUILD = Path(__file__).resolve().parents[2] / "docs" / "results" / "clevr-dev200" / "build30-attribute" / "library.json"
pytestmark = pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")

STEPS = '''
def _camera_x(image: Image, bbox: BBox) -> float:
    """Horizontal position in the camera frame, up to a positive factor (CLEVR's left and right)."""
    return ((bbox[0] + bbox[2]) / 2 - image.width / 2) * depth(image, bbox)


def _holds(image: Image, box: BBox, relation: str, reference: BBox) -> bool:
    """Whether `box` is `relation` of `reference`."""
    if relation in ("left", "right"):
        a, b = _camera_x(image, box), _camera_x(image, reference)
        return a < b if relation == "left" else a > b
    a, b = depth(image, box), depth(image, reference)
    return a < b if relation == "front" else a > b


def _read(image: Image, attribute: str, box: BBox) -> str:
    """The attribute's word for the object."""
    return vqa(image, f"What {attribute} is this object?", box)


def _related(image: Image, description: str, relation: str, reference: BBox) -> list[BBox]:
    """The objects matching `description` in `relation` to `reference`, never the reference."""
    return [b for b in loc(image, description)
            if not same_object(image, b, reference) and _holds(image, b, relation, reference)]


def _same_as(image: Image, attribute: str, description: str, reference: BBox) -> list[BBox]:
    """The other objects matching `description` sharing `attribute` with `reference`."""
    value = _read(image, attribute, reference)
    return [b for b in loc(image, description)
            if not same_object(image, b, reference) and _read(image, attribute, b) == value]
'''
RIGHT = STEPS + '''

def _is_related(image: Image, box: BBox, relation: str, reference: BBox) -> bool:
    """Whether `box` is `relation` of `reference`."""
    return _holds(image, box, relation, reference)


def _count_related(image: Image, description: str, relation: str, reference: BBox) -> int:
    """How many."""
    return len(_related(image, description, relation, reference))


def _exists_related(image: Image, description: str, relation: str, reference: BBox) -> bool:
    """Whether any."""
    return len(_related(image, description, relation, reference)) > 0


def _attribute_of_related(image: Image, attribute: str, description: str, relation: str, reference: BBox) -> str:
    """The attribute of the related object."""
    return _read(image, attribute, _related(image, description, relation, reference)[0])


def _attribute_of(image: Image, attribute: str, box: BBox) -> str:
    """The attribute."""
    return _read(image, attribute, box)


def _same_attribute(image: Image, attribute: str, first: BBox, second: BBox) -> bool:
    """Whether they share it."""
    return _read(image, attribute, first) == _read(image, attribute, second)


def _count_same_attribute(image: Image, attribute: str, description: str, reference: BBox) -> int:
    """How many share it."""
    return len(_same_as(image, attribute, description, reference))


def _exists_same_attribute(image: Image, attribute: str, description: str, reference: BBox) -> bool:
    """Whether any shares it."""
    return len(_same_as(image, attribute, description, reference)) > 0


def _attribute_of_same(image: Image, asked: str, description: str, shared: str, reference: BBox) -> str:
    """The asked attribute of the one sharing `shared`."""
    return _read(image, asked, _same_as(image, shared, description, reference)[0])


def _count_either(image: Image, first: list[BBox], second: list[BBox]) -> int:
    """Objects in either list, once."""
    return len(first) + len([b for b in second if not any(same_object(image, b, a) for a in first)])


def _compare_counts(image: Image, first: list[BBox], second: list[BBox], order: str) -> bool:
    """more, fewer or equal."""
    return {"more": len(first) > len(second), "fewer": len(first) < len(second),
            "equal": len(first) == len(second)}[order]
'''
NO_SIZE_BRANCH = STEPS + '''

def _exists_same_attribute(image: Image, attribute: str, description: str, reference: BBox) -> bool:
    """Whether any shares it: color, shape and material only (the build's had no 'size' branch)."""
    if attribute == "size":
        return False
    return len(_same_as(image, attribute, description, reference)) > 0
'''


@pytest.fixture(scope="module")
def clevr():
    dataset = ClevrDataset(CLEVR_DIR)
    return dataset, oracle_modules(dataset), dataset.questions("dev")[:24]


def check(tmp_path, source, name, clevr):
    dataset, modules, questions = clevr
    with ApiStore(tmp_path / f"{name}.sqlite") as store:
        add_functions(store, source)
        return TruthChecks(lambda code, ns: execute(code, ns, timeout_s=10)).check(
            store.current(name), store.functions(), dataset, modules, questions)


CLEVR_SHAPES = ("_is_related", "_count_related", "_exists_related", "_attribute_of_related", "_attribute_of",
                "_same_attribute", "_count_same_attribute", "_exists_same_attribute", "_attribute_of_same",
                "_compare_counts", "_count_either")  # the generated benchmark's: tests/data/test_bench_shape_helpers.py


@pytest.mark.parametrize("name", CLEVR_SHAPES)
def test_a_right_body_passes_on_every_value_of_its_parameters(tmp_path, clevr, name):
    result = check(tmp_path, RIGHT, name, clevr)
    assert result.claim == f"question shape {name}" and result.passed is True, result.failures
    assert result.cases >= 4  # enough to count as confirmed at the gate (MIN_TRUTH_CASES)


def test_the_builds_count_that_compared_materials_for_color_fails_on_the_color_case(tmp_path, clevr):
    [record] = [f for f in json.loads(BUILD.read_text())["functions"] if f["name"] == "_count_same_attribute"]
    steps = [f for f in json.loads(BUILD.read_text())["functions"]
             if f["name"] in ("_material_of_object", "_size_of_object")]
    source = "\n\n".join(f"def {f['name']}{f['signature']}:\n    \"\"\"{f['name']}.\"\"\"\n"
                         + f["code"].split("\n", 1)[1] for f in [*steps, record])
    result = check(tmp_path, source, "_count_same_attribute", clevr)
    assert result.passed is False
    assert any("'color'" in f or "'shape'" in f for f in result.failures), result.failures


def test_a_union_count_that_tells_objects_apart_by_equal_boxes_fails_when_one_object_is_read_twice(tmp_path, clevr):
    """A CLEVR build admitted `_count_either` counting `box in second`: right only while both lists hold
    the very same box for an object, which two detector readings never do."""
    equal_boxes = RIGHT.replace(
        "return len(first) + len([b for b in second if not any(same_object(image, b, a) for a in first)])",
        "return len(first) + len(second) - len([box for box in first if box in second])")
    assert equal_boxes != RIGHT
    result = check(tmp_path, equal_boxes, "_count_either", clevr)
    assert result.passed is False and any("also in the first" in f for f in result.failures), result.failures


def test_a_count_that_skips_the_reference_by_equal_boxes_fails_when_the_reference_is_read_again(tmp_path, clevr):
    """A 30-question CLEVR build admitted `_count_same_attribute` skipping `box != reference`: right only
    while the program's `loc` call gave the reference the very box `loc(image, description)` gives it."""
    build = Path(__file__).resolve().parents[2] / "docs/results/clevr-dev200/build30-f97f20b/library.json"
    functions = {f["name"]: f for f in json.loads(build.read_text())["functions"]}
    record = functions["_count_same_attribute"]
    assert "box != reference" in record["code"]
    steps = [functions[f"_same_{a}"] for a in ("color", "material", "shape", "size")]
    source = "\n\n".join(f"def {f['name']}{f['signature']}:\n    \"\"\"{f['name']}.\"\"\"\n"
                         + f["code"].split('"""', 2)[2] for f in [*steps, record])
    result = check(tmp_path, source, "_count_same_attribute", clevr)
    assert result.passed is False and result.failures, result.failures
    told = source.replace("if box != reference and", "if not same_object(image, box, reference) and")
    (tmp_path / "told").mkdir()
    assert told != source and check(tmp_path / "told", told, "_count_same_attribute", clevr).passed is True


def test_a_body_without_a_size_branch_fails_on_the_size_case(tmp_path, clevr):
    result = check(tmp_path, NO_SIZE_BRANCH, "_exists_same_attribute", clevr)
    assert result.passed is False and all("'size'" in f for f in result.failures), result.failures


def test_every_relation_and_attribute_is_tried_before_any_twice():
    from vadar.library.shape_truth import shape_cases
    from vadar.library.truth_case import SceneView
    scene = {"objects": [{"color": c, "shape": "cube", "material": "rubber", "size": "large"}
                         for c in ("red", "red", "blue")],
             "relationships": {"left": [[], [0], [0, 1]], "right": [[1, 2], [2], []],
                               "front": [[1], [], [0, 1]], "behind": [[2], [0, 2], []]}}
    view = SceneView(scene, [[0, 0, 1, 1], [2, 0, 3, 1], [4, 0, 5, 1]], {}, frozenset({0, 1, 2}))
    cases = [case for _, case in shape_cases("_count_related", [view, view], limit=4)]
    assert [c.value for c in cases] == ["left", "right", "front", "behind"]
    assert [c.expected for c in cases] == [0, 2, 1, 1]
    attributes = [case.value for _, case in shape_cases("_count_same_attribute", [view], limit=10)]
    assert attributes == ["color", "shape", "material", "size"] * 2 + ["color", "shape"]  # each reference in turn
    assert [c.expected for _, c in shape_cases("_count_same_attribute", [view], limit=4)] == [1, 2, 2, 2]


def test_an_answer_is_judged_by_the_type_the_truth_has():
    def failure(case, value):
        return judge_shape_case("f()", case, value)[0]

    yes = ShapeCase((), (), True)
    assert failure(yes, "yes") is None and failure(yes, True) is None and "returned 'no'" in failure(yes, "no")
    three = ShapeCase((), (), 3)
    assert failure(three, 3.0) is None and failure(three, "3") is not None
    red = ShapeCase((), (), "red")
    assert failure(red, " Red") is None and failure(red, ["red"]) is not None
    ratio = ShapeCase((), (), 2.0, level=0.5)  # a measure earns its MRA, failing beyond the tolerance
    assert judge_shape_case("f()", ratio, 2.2) == (None, 0.8)
    assert judge_shape_case("f()", ratio, 3.0) == ("f() returned 3, but the truth is 2", 0.0)
    assert judge_shape_case("f()", ratio, "2")[1] == 0.0


def test_every_case_maker_is_a_catalogue_helper():
    assert set(CASES) <= {h.name for h in CATALOGUE} and set(CLEVR_SHAPES) <= set(CASES)
