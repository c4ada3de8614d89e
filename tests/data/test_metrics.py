"""Metric numerics: integer parsing, string normalisation, MRA bounds and summaries."""

from __future__ import annotations

import numpy as np
import pytest

from omni3d_bench.metrics import (
    MRA_THRESHOLDS,
    Summary,
    evaluate,
    mean_relative_accuracy,
    score_answer,
    score_int,
    score_str,
    summarize,
    within_ten_percent,
)


@pytest.mark.parametrize("pred", [3, 3.0, "3", " 3 ", "3.0", "3.", "three", np.int64(3),
                                  np.float32(3.0), np.array(3), np.array([3])])
def test_int_matches(pred: object) -> None:
    assert score_int(pred, "3") == 1.0


@pytest.mark.parametrize("pred", [2, 3.5, "2.9999", "three cubes", "", None, True, [3],
                                  np.array([3, 3]), float("nan"), ValueError("boom"), object()])
def test_int_mismatches_never_crash(pred: object) -> None:
    assert score_int(pred, "3") == 0.0


def test_int_zero_and_bools() -> None:
    assert score_int("zero", "0") == 1.0 and score_int(0, "0") == 1.0
    assert score_int(False, "0") == 0.0  # a boolean is not a count


@pytest.mark.parametrize(("pred", "gold"), [
    ("yes", "yes"), ("Yes.", "yes"), (" YES ", "yes"), (True, "yes"), (np.bool_(True), "yes"),
    ("true", "yes"), ("True", "yes"), (1, "yes"), ("no", "no"), (False, "no"), ("False", "no"),
    (np.bool_(False), "no"), (0, "no"), ("Cube", "cube"), ("a cube.", "cube"),
    ("the  large   sphere", "large sphere"), ("'metal'", "metal"), (np.str_("red"), "red"),
    (2, "2"), (np.int64(2), "2"), (2.0, "2"),
])
def test_str_matches(pred: object, gold: str) -> None:
    assert score_str(pred, gold) == 1.0


@pytest.mark.parametrize(("pred", "gold"), [
    ("no", "yes"), (False, "yes"), ("yes", "no"), (None, "yes"), ("", "no"), ("true", "cube"),
    ("cubes", "cube"), ("red cube", "red"), (ValueError("x"), "no"), (np.array([1, 0]), "yes"),
])
def test_str_mismatches(pred: object, gold: str) -> None:
    assert score_str(pred, gold) == 0.0


def test_mra_thresholds_are_the_ten_bounds() -> None:
    assert MRA_THRESHOLDS == (0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05)
    # the same ten events as |err| < 1 - theta for theta in 0.50, 0.55, ..., 0.95
    thetas = [round(0.5 + 0.05 * k, 2) for k in range(10)]
    assert sorted(round(1 - t, 2) for t in thetas) == sorted(MRA_THRESHOLDS)


@pytest.mark.parametrize(("pred", "gold", "expected"), [
    (10, 10, 1.0),
    (11, 10, 0.8),      # err 0.10 passes 0.50..0.15, fails 0.10 (strict) and 0.05
    (9, 10, 0.8),
    (10.4, 10, 1.0),    # err 0.04 passes all ten
    (10.5, 10, 0.9),    # err 0.05 on the bound: fails 0.05 only
    (11.5, 10, 0.7),    # err 0.15 on the bound: passes 0.50..0.20
    (12.0, 10, 0.6),    # err 0.20 -> 0.50..0.25
    (14.9, 10, 0.1),    # err 0.49 -> 0.50 only
    (15, 10, 0.0),      # err 0.50 on the last bound
    (5, 10, 0.0),
    (-10, 10, 0.0),
    ("1.1", "1.0", 0.8),
    (np.float64(0.33), 0.3, 0.8),  # err 0.10 with binary noise
    (-2.2, -2.0, 0.8),
    (0, 0, 1.0),
    (0.1, 0, 0.0),
    (None, 10, 0.0),
    ("about ten", 10, 0.0),
    (True, 1.0, 0.0),
])
def test_mra_values(pred: object, gold: object, expected: float) -> None:
    assert mean_relative_accuracy(pred, gold) == pytest.approx(expected)


def test_bad_gold_and_type_raise() -> None:
    with pytest.raises(ValueError, match="not a number"):
        mean_relative_accuracy(1, "cube")
    with pytest.raises(ValueError, match="unknown answer_type"):
        score_answer(1, 1, "bool")


def test_score_answer_dispatch() -> None:
    assert score_answer("3", "3", "int") == 1.0
    assert score_answer(11, "10", "float") == pytest.approx(0.8)
    assert score_answer(True, "yes", "str") == 1.0


def test_summary_odd_counts_keep_every_question() -> None:
    scored = [("int", 1.0), ("int", 0.0), ("int", 1.0), ("str", 0.0), ("float", 0.8)]
    s = summarize(scored)
    assert s.count == 5
    assert s.per_type["int"].count == 3 and s.per_type["int"].mean == pytest.approx(2 / 3)
    assert s.per_type["str"].count == 1 and s.per_type["str"].mean == 0.0
    assert s.per_type["float"].mean == pytest.approx(0.8)
    assert s.total == pytest.approx(2.8 / 5)
    assert s.mean_over_types == pytest.approx((2 / 3 + 0 + 0.8) / 3)
    assert list(s.per_type) == ["int", "str", "float"]


def test_summary_single_and_last_question() -> None:
    assert summarize([("str", 1.0)]).total == 1.0
    s = summarize([("int", 0.0)] * 6 + [("int", 1.0)])
    assert s.count == 7 and s.total == pytest.approx(1 / 7)


def test_summary_empty() -> None:
    s = summarize([])
    assert s == Summary() and s.count == 0 and s.total == 0.0


def test_evaluate_dict_and_markdown() -> None:
    s = evaluate([(np.int64(2), "2", "int"), ("no", "yes", "str"), (11, "10", "float")])
    d = s.as_dict()
    assert d["count"] == 3
    assert d["per_type"]["int"] == {"count": 1, "mean": 1.0}
    assert d["total"] == pytest.approx(1.8 / 3)
    md = s.to_markdown()
    assert "| int | 1 | 1.0000 |" in md
    assert "| float | 1 | 0.8000 |" in md
    assert "| **total (weighted)** | 3 | 0.6000 |" in md


@pytest.mark.parametrize(("pred", "expected"), [
    (10, 1.0), (9, 1.0), (11, 1.0), ("9.0", 1.0), ("11.0", 1.0), (10.5, 1.0),
    (8.99, 0.0), (11.01, 0.0), (12, 0.0), ("eleven", 0.0), (None, 0.0), ("n/a", 0.0),
])
def test_acc10_bounds_are_inclusive(pred: object, expected: float) -> None:
    assert score_answer(pred, "10", "float", metric="acc@10") == expected


def test_acc10_small_golds_and_zero() -> None:
    # 1.1 * 3.7 is 4.07 exactly in decimal: on the bound, accepted despite binary rounding
    assert within_ten_percent(4.07, 3.7) == 1.0 and within_ten_percent(4.0701, 3.7) == 0.0
    assert within_ten_percent(3.33, 3.7) == 1.0 and within_ten_percent(3.3299, 3.7) == 0.0
    assert within_ten_percent(0, "0") == 1.0 and within_ten_percent(0.01, "0") == 0.0
    # a count of 3 accepts only 3 among integers (2 and 4 are 33% off)
    assert [within_ten_percent(k, 3) for k in (2, 3, 4)] == [0.0, 1.0, 0.0]


def test_metric_overrides_answer_type_and_default_is_unchanged() -> None:
    assert score_answer(11, "10", "float") == pytest.approx(0.8)  # MRA by answer type
    assert score_answer(11, "10", "float", metric="acc@10") == 1.0
    assert score_answer(10.5, "10", "int", metric="acc@10") == 1.0
    assert score_answer("Left", "left", "str", metric="exact") == 1.0
    assert score_answer(3.0, "3", "str", metric="exact") == 1.0
    assert score_answer(11, "10", "float", metric="mra") == pytest.approx(0.8)
    with pytest.raises(ValueError, match="unknown metric 'acc10'"):
        score_answer(1, "1", "int", metric="acc10")
    with pytest.raises(ValueError, match="not a number"):
        within_ten_percent(1, "left")
