"""Ground-truth property checks: a helper must return exactly the objects its name claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from api_store import ApiStore
from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.relations import related_objects
from vadar.library.hand import add_functions
from vadar.library.truth_checks import TruthChecks, claim_of
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
HAND = Path(__file__).resolve().parents[2] / "benchmarks" / "hand_library" / "clevr.py"
pytestmark = pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")

# The admitted-but-wrong helper seen on held-out CLEVR questions: `bbox` is reused as the loop
# variable, so the test holds for every box and every object comes back, the reference included.
EVERY_OBJECT = '''
def _objects_left_of(image: Image, bbox: BBox) -> list[BBox]:
    """Every object left of the object in `bbox`."""
    return [bbox for bbox in loc(image, "objects") if bbox[0] < bbox[0] + bbox[2] / 2]
'''
SAME_SIZE_IN_PIXELS = '''
def _same_size(image: Image, a: BBox, b: BBox) -> bool:
    """Whether the two objects have the same size."""
    return get_2D_object_size(image, a) == get_2D_object_size(image, b)
'''


@pytest.fixture(scope="module")
def clevr():
    dataset = ClevrDataset(CLEVR_DIR)
    return dataset, oracle_modules(dataset), dataset.questions("dev")[:24]


def _check(tmp_path, source, name, clevr):
    dataset, modules, questions = clevr
    with ApiStore(tmp_path / "lib.sqlite") as store:
        add_functions(store, source)
        library = store.functions()
        record = store.current(name)
        return TruthChecks(lambda code, ns: execute(code, ns, timeout_s=10)).check(
            record, library, dataset, modules, questions)


def test_a_helper_returning_every_object_fails_the_ground_truth_check(tmp_path, clevr):
    result = _check(tmp_path, EVERY_OBJECT, "_objects_left_of", clevr)
    assert result.passed is False and result.claim == "relation:left"
    assert any("reference object itself" in f for f in result.failures)


def test_correct_relation_helpers_pass_on_every_sampled_case(tmp_path, clevr):
    for name, relation in (("_objects_left_of", "left"), ("_objects_right_of", "right"),
                           ("_objects_in_front_of", "front"), ("_objects_behind", "behind")):
        result = _check(tmp_path / name, HAND.read_text(), name, clevr)
        assert result.claim == f"relation:{relation}"
        assert result.passed is True, result.failures
        assert result.cases >= 6


def test_a_left_helper_used_for_right_fails(tmp_path, clevr):
    swapped = HAND.read_text().replace("def _objects_right_of(", "def _unused_right(").replace(
        "def _objects_left_of(", "def _objects_right_of(")
    result = _check(tmp_path, swapped, "_objects_right_of", clevr)
    assert result.passed is False and "missing" in result.failures[0]


def test_same_size_by_pixel_area_fails_against_the_size_category(tmp_path, clevr):
    result = _check(tmp_path, SAME_SIZE_IN_PIXELS, "_same_size", clevr)
    assert result.claim == "same:size" and result.passed is False


def test_helpers_that_claim_nothing_checkable_give_no_evidence(tmp_path, clevr):
    result = _check(tmp_path, HAND.read_text(), "_camera_x", clevr)
    assert result.passed is None and result.cases == 0


def test_claims_are_read_from_name_and_signature():
    class Record:
        def __init__(self, name, signature):
            self.name, self.signature = name, signature
    assert claim_of(Record("_objects_in_front_of", "(image: Image, ref: BBox) -> list[BBox]")).value == "front"
    assert claim_of(Record("_same_color", "(image, a, b) -> bool")).value == "color"
    assert claim_of(Record("_count_left_of", "(image, ref) -> int")) is None  # not a list of objects
    assert claim_of(Record("_objects_not_left_of", "(image, ref) -> list[BBox]")) is None


def test_relations_of_generated_scenes_follow_the_generator_rules():
    scene = {"objects": [{"bbox2D_proj": [0, 0, 10, 10], "depth": 5.0},
                         {"bbox2D_proj": [20, 0, 30, 10], "depth": 3.0},
                         {"bbox2D_proj": [40, 0, 50, 10], "depth": 7.0}]}
    assert related_objects(scene, 1, "left") == {0}
    assert related_objects(scene, 1, "right") == {2}
    assert related_objects(scene, 0, "front") == {1}
    assert related_objects(scene, 0, "behind") == {2}


# A common small-model idiom: right answers, and the caller's list is one box short afterwards.
CHANGES_ITS_CANDIDATES = '''
def _objects_left_of(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]:
    """Every other object among `candidates` left of the object in `reference`."""
    candidates.remove(reference)
    x = ((reference[0] + reference[2]) / 2 - image.width / 2) * depth(image, reference)
    return [b for b in candidates if ((b[0] + b[2]) / 2 - image.width / 2) * depth(image, b) < x]
'''


def test_a_helper_that_changes_its_callers_list_fails_and_the_failure_names_the_argument(tmp_path, clevr):
    result = _check(tmp_path, CHANGES_ITS_CANDIDATES, "_objects_left_of", clevr)
    assert result.claim == "relation:left" and result.cases >= 6
    assert result.passed is False
    assert "changed its argument `candidates`" in result.failures[0]


def test_the_same_helper_working_on_a_copy_passes(tmp_path, clevr):
    copying = CHANGES_ITS_CANDIDATES.replace("    candidates.remove(reference)\n",
                                             "    candidates = [b for b in candidates if b != reference]\n")
    result = _check(tmp_path, copying, "_objects_left_of", clevr)
    assert result.passed is True, result.failures


# Right where it ends, and a loop for every reference right of x = 200.
LOOPS_ON_SOME_INPUTS = '''
def _objects_left_of(image: Image, reference: BBox) -> list[BBox]:
    """Every other object left of the object in `reference`."""
    while reference[0] > 200:
        pass
    x = ((reference[0] + reference[2]) / 2 - image.width / 2) * depth(image, reference)
    return [b for b in loc(image, "objects") if ((b[0] + b[2]) / 2 - image.width / 2) * depth(image, b) < x
            and not same_object(image, b, reference)]
'''


def test_a_helper_that_runs_out_of_time_on_one_case_fails_without_running_the_rest(tmp_path, clevr):
    dataset, modules, questions = clevr
    with ApiStore(tmp_path / "lib.sqlite") as store:
        add_functions(store, LOOPS_ON_SOME_INPUTS)
        record = store.current("_objects_left_of")
        runs = []

        def executor(code, namespace):
            runs.append(code)
            return execute(code, namespace, timeout_s=0.5)

        result = TruthChecks(executor).check(record, store.functions(), dataset, modules, questions)
    assert result.passed is False and result.failures[-1].endswith("its other cases were not run")
    assert sum("ran out of time" in failure for failure in result.failures) == 1
    assert len(runs) == result.cases and result.cases < 24  # 6 images of up to 4 cases each


READS_COLOR = '''
def _color_of_object(image: Image, bbox: BBox) -> str:
    """The color of the object in bbox."""
    return vqa(image, "What color is this object?", bbox)
'''
READS_SHAPE_FOR_COLOR = '''
def _color_of_object(image: Image, bbox: BBox) -> str:
    """The color of the object in bbox."""
    return vqa(image, "What shape is this object?", bbox)
'''


def test_an_attribute_reader_must_return_the_objects_annotated_attribute(tmp_path, clevr):
    right = _check(tmp_path / "right", READS_COLOR, "_color_of_object", clevr)
    assert right.passed is True and right.claim == "attribute:color" and right.cases >= 6
    wrong = _check(tmp_path / "wrong", READS_SHAPE_FOR_COLOR, "_color_of_object", clevr)
    assert wrong.passed is False and wrong.claim == "attribute:color"
    assert wrong.failures[0].endswith("_color_of_object(image, box of yellow rubber large cube #0) returned 'cube', "
                                      "but the color of the yellow rubber large cube #0 is 'yellow'")
