"""benchmarks/library_results.py: the build's figures (seconds per build question, helper pass@1 and pass@k)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from api_store import ApiStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import library_results  # noqa: E402


def test_build_figures_read_the_build_runs_and_the_searches(tmp_path):
    db = tmp_path / "lib.sqlite"
    with ApiStore(db) as store:
        run = store.start_run("build-api", config={})
        store.start_batch(run.id, ["a", "b", "c", "d"])
        store.start_batch(run.id, ["e", "f", "g", "h"])
        store.finish_run(run.id)
        store._db.execute("UPDATE runs SET started_at = ?, finished_at = ? WHERE id = ?",
                          ["2026-11-26T10:00:00+00:00", "2026-11-26T10:04:00+00:00", run.id])
        for index, passed in enumerate(([1], [3], [12], [])):
            store.propose(f"_h{index}", "(image)", "Doc.")
            store.record_decision(f"_h{index}", "searched", mode="search", evidence={"passed": passed})
    figures = library_results.build_figures(db, 8)
    assert figures["build_seconds_per_question"] == pytest.approx(240 / 8)
    assert figures["searches"] == 4
    assert figures["helper_pass_at_1"] == 0.25 and figures["helper_pass_at_k"] == 0.5
    assert figures["helper_pass_any"] == 0.75


def test_the_helpers_figures_carry_the_coverage_of_the_build_questions(tmp_path):
    from vadar.library.gate import admit_as_given

    sample = Path(__file__).resolve().parents[2] / "omni3d_bench" / "sample"
    db = tmp_path / "lib.sqlite"
    with ApiStore(db) as store:
        run = store.start_run("build-api", config={"data": str(sample), "split": "sample"})
        store.start_batch(run.id, ["0", "1"])  # "How many cylinders?", "How many things are left of ...?"
        store.propose("_count_matching", "(image: Image, object_prompt: str) -> int", "Count the matches.")
        store.implement("_count_matching", "def _count_matching(image, object_prompt):\n"
                        "    return len(loc(image, object_prompt))\n")
        admit_as_given(store, ["_count_matching"], mode="hand")
    helpers = library_results.check_helpers(db, sample, "sample")
    assert helpers["admitted"] == ["_count_matching"] and helpers["build_questions"] == 2
    assert helpers["coverage"] == 0.5  # the count is covered, "left of" is not


def test_the_helper_figures_read_programs_by_their_syntax_tree():
    from types import SimpleNamespace as Row

    runs = {
        "a": Row(program="boxes = _objects_left_of(image, ref, loc(image, 'objects'))\nfinal_result = len(boxes)",
                 correct=True, error=None),
        "b": Row(program="final_result = _count(image, 'cube')", correct=False, error=None),
        "c": Row(program="def _mine(x):\n    return x\nfinal_result = _mine(3)", correct=True, error=None),
        "d": Row(program="# _left_of(a, b) in a comment\nfinal_result = (", correct=False, error="SyntaxError"),
    }
    ids = list(runs)
    assert [library_results.uses_library(runs[q]) for q in ids] == [True, True, False, False]
    assert library_results.helper_programs_right(runs, ids) == 0.5
    assert library_results.no_program(runs, ids) == 0.25


def test_questions_are_grouped_by_their_shape_largest_first():
    from types import SimpleNamespace

    run = {"1": SimpleNamespace(question="How many other things are the same size as the red cube?"),
           "2": SimpleNamespace(question="How many other cubes have the same color as the ball?"),
           "3": SimpleNamespace(question="What color is the cube left of the ball?")}
    assert library_results.shape_groups(run, ["1", "2", "3"]) == [("count, shared", ["1", "2"]),
                                                                   ("attribute, spatial", ["3"])]
