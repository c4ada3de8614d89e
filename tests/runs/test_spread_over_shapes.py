"""Build questions picked across question shapes: a data set's first questions can be few shapes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.types import Question
from vadar.programs.question_shape import shape_of
from vadar.runs.prepare import DataSelection, spread_over_shapes

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"


def asked(question_id: str, text: str) -> Question:
    return Question(question_id, text, "1", "int", "a", Path("a.png"), "s", "test")


def test_shapes_are_taken_in_turn_the_most_common_first_a_support_at_a_time():
    questions = [asked("0", "How many cubes are there?"), asked("1", "How many spheres are there?"),
                 asked("2", "How many balls are left of the cube?"), asked("3", "How many cylinders are there?"),
                 asked("4", "Are there more cubes than spheres?"), asked("5", "How many things are behind the cube?")]
    # counts (3), spatial counts (2), a comparison (1)
    assert [q.question_id for q in spread_over_shapes(questions, 4, per_shape=1)] == ["0", "2", "4", "1"]
    assert [q.question_id for q in spread_over_shapes(questions, None, per_shape=1)] == ["0", "2", "4", "1", "5", "3"]
    assert [q.question_id for q in spread_over_shapes(questions, 4, per_shape=2)] == ["0", "1", "2", "5"]
    assert [q.question_id for q in spread_over_shapes(questions, None, per_shape=2)] == ["0", "1", "2", "5", "4", "3"]
    assert spread_over_shapes(questions, 0) == [] and spread_over_shapes([], 3) == []


@pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")
def test_thirty_clevr_build_questions_from_the_first_104_hold_every_shape():
    first = ClevrDataset(CLEVR_DIR).questions("dev")
    shapes = lambda qs: Counter((shape_of(q.question).answer, shape_of(q.question).relation) for q in qs)  # noqa: E731
    assert ("count", "either") not in shapes(first[:30])  # the first 30 are 6 shapes
    picked = spread_over_shapes(first[:104], 30)
    assert len(picked) == 30 and len(shapes(picked)) == 10 and set(shapes(picked).values()) == {3}
    assert shapes(picked)[("count", "either")] == shapes(picked)[("yes/no", "count comparison")] == 3
    # a shape's three complete in one batch of ten, a few shapes a batch: the first batch completes three
    assert sum(n == 3 for n in shapes(picked[:10]).values()) == 3
    assert all(int(q.question_id) < 104 for q in picked)  # evaluation from question 104 stays scene-disjoint
    prepared = DataSelection(CLEVR_DIR, "dev", limit=30, spread_over=104).prepare(load=False)
    assert [q.question_id for q in prepared.questions] == [q.question_id for q in picked]
