"""Ground truth checks `_objects_along` on chains of two relations, every relation in each place: the
build questions' answers were its only check, and a walk that drops the inner relation passed them
as often as right programs did on a yes/no."""

from __future__ import annotations

from pathlib import Path

import pytest

from api_store import ApiStore
from omni3d_bench.datasets.clevr import ClevrDataset
from vadar.library.hand import add_functions
from vadar.library.shape_truth import shape_cases
from vadar.library.truth_case import SceneView, ShapeCase, judge_shape_case
from vadar.library.truth_checks import TruthChecks
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
HAND = (Path(__file__).resolve().parents[2] / "benchmarks" / "hand_library" / "clevr_chain.py").read_text()


def _check(tmp_path, source):
    dataset = ClevrDataset(CLEVR_DIR)
    with ApiStore(tmp_path / "chain.sqlite") as store:
        add_functions(store, source)
        return TruthChecks(lambda code, ns: execute(code, ns, timeout_s=10)).check(
            store.current("_objects_along"), store.functions(), dataset, oracle_modules(dataset),
            dataset.questions("dev")[:24])


@pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")
def test_the_hand_written_walk_passes_and_walks_that_drop_or_swap_a_relation_fail(tmp_path):
    right = _check(tmp_path / "right", HAND)
    assert right.claim == "question shape _objects_along" and right.passed is True, right.failures
    assert right.cases >= 4
    # the outermost relation only: the inner link is never tested
    outer_only = HAND.replace("        boxes = kept\n        if not boxes:\n            return []",
                              "        boxes = kept if i == 1 else [box for box in loc(image, chain[i - 1])]\n"
                              "        if not boxes:\n            return []")
    assert outer_only != HAND
    dropped = _check(tmp_path / "outer", outer_only)
    assert dropped.passed is False and all("boxes, but the truth is" in f for f in dropped.failures), dropped.failures
    # the chain walked from its first item, as the question reads, not from the end
    from_start = HAND.replace("found = loc(image, chain[-1])[0]", "chain = chain[::-1]\n    found = loc(image, chain[-1])[0]")
    assert _check(tmp_path / "start", from_start).passed is False


def test_a_chain_case_counts_the_objects_of_the_outer_relation_only_where_the_inner_one_holds():
    scene = {"objects": [{"color": c, "shape": "cube", "material": "rubber", "size": "large"}
                         for c in ("red", "green", "blue")],
             "relationships": {"left": [[], [0], [0, 1]], "right": [[1, 2], [2], []],
                               "front": [[1], [], [0, 1]], "behind": [[2], [0, 2], []]}}
    view = SceneView(scene, [[0, 0, 1, 1], [2, 0, 3, 1], [4, 0, 5, 1]],
                     {0: "red cube", 1: "green cube", 2: "blue cube"}, frozenset({0, 1, 2}))
    cases = [case for _, case in shape_cases("_objects_along", [view], limit=8)]
    assert [c.value for c in cases[:4]] == ["left", "right", "front", "behind"]
    by_chain = {tuple(c.arguments[0]): c for _, c in shape_cases("_objects_along", [view], limit=100)}
    # objects left of the blue cube, which is right of the green cube: the red and the green cube
    holds = by_chain[("objects", "left", "blue cube", "right", "green cube")]
    assert holds.counted and holds.expected == 2
    # the red cube is not right of the green cube: the chain picks nothing, whatever is left of red
    assert by_chain[("objects", "left", "red cube", "right", "green cube")].expected == 0
    assert by_chain[("objects", "right", "red cube", "front", "blue cube")].expected == 2


def test_a_chain_answer_is_judged_by_how_many_boxes_it_returns():
    case = ShapeCase(([],), ("[...]",), 2, counted=True)
    assert judge_shape_case("f()", case, [[0, 0, 1, 1], [2, 0, 3, 1]]) == (None, 1.0)
    assert judge_shape_case("f()", case, [[0, 0, 1, 1]]) == ("f() returned 1 boxes, but the truth is 2", 0.0)
    assert "not a list of boxes" in judge_shape_case("f()", case, 2)[0]
