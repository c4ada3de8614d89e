"""Scoring predictions against gold answers, per answer type, and summarising a run.

Scores are in [0, 1]. Predictions come straight from generated programs, so they may be any
Python or numpy value; anything that cannot be read as an answer scores 0 instead of raising,
because one odd return value must not abort a benchmark run.

- int: exact after numeric parsing ("3.0", " 3 ", 3.0, np.int64(3) and "three" all equal 3).
- str: normalised exact match; yes/no golds also accept booleans and true/false/1/0.
- float: mean relative accuracy (MRA), see `mean_relative_accuracy`.

A question may name another metric (`Question.metric`, see `METRICS`): `acc@10` scores a numeric
answer 1 when it lies within 10% of the gold (the warehouse challenge's rule for distances and
counts), `mra` and `exact` force those rules whatever the answer type.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MRA_THRESHOLDS: tuple[float, ...] = tuple(k / 100 for k in range(50, 0, -5))
"""Relative-error bounds 0.50, 0.45, ..., 0.05. Passing bound t is the same event as passing
confidence theta = 1 - t in MRA's usual C = {0.50, 0.55, ..., 0.95}: |pred - gold| / |gold| < t."""

REL_ERR_DECIMALS = 12
"""Relative errors are rounded before comparison so that a prediction exactly on a bound (in
decimal, e.g. gold 10, pred 11.5) fails it as the strict `<` says, regardless of binary rounding."""

WORD_NUMBERS = {
    "zero": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}
YES_WORDS = {"yes", "true", "1", "y"}
NO_WORDS = {"no", "false", "0", "n"}
ARTICLES = re.compile(r"^(a|an|the)\s+")
SPACES = re.compile(r"\s+")


def unwrap(value: Any) -> Any:
    """Turn numpy scalars and one-element arrays into plain Python values, keeping their value."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except Exception:  # several elements (numpy ValueError, torch RuntimeError), or no scalar
            return value
    return value


def clean_text(text: str) -> str:
    """Lower-case, trim, drop surrounding quotes and trailing periods, collapse spaces."""
    text = SPACES.sub(" ", text.strip().lower())
    text = text.strip("\"'` ").rstrip(".").strip()
    return text


def parse_number(value: Any) -> float | None:
    """A finite number from a prediction, or None when it is not one (bools are not numbers)."""
    value = unwrap(value)
    if value is None or isinstance(value, (bool, BaseException)):
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int beyond the float range (10**400) is no usable number
            return None
    elif isinstance(value, str):
        text = clean_text(value).replace(",", "")
        if text in WORD_NUMBERS:
            return float(WORD_NUMBERS[text])
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def score_int(prediction: Any, gold: Any) -> float:
    """1.0 when the prediction is numerically equal to the integer gold answer."""
    target = parse_number(gold)
    if target is None:
        raise ValueError(f"gold answer {gold!r} is not a number; check the question's answer_type")
    value = parse_number(prediction)
    return 1.0 if value is not None and value == target else 0.0


def text_of(prediction: Any) -> str | None:
    """Canonical text of a prediction for string comparison, or None if it has none."""
    prediction = unwrap(prediction)
    if prediction is None or isinstance(prediction, BaseException):
        return None
    if isinstance(prediction, bool):
        return "yes" if prediction else "no"
    if isinstance(prediction, float) and prediction.is_integer():
        return str(int(prediction))
    if isinstance(prediction, (int, float)):
        try:
            return str(prediction)
        except ValueError:  # an int with more digits than Python converts to text
            return None
    if isinstance(prediction, str):
        return ARTICLES.sub("", clean_text(prediction))
    return None


def score_str(prediction: Any, gold: Any) -> float:
    """1.0 on a normalised exact match; yes/no golds accept booleans and true/false/1/0."""
    target = text_of(gold)
    value = text_of(prediction)
    if target is None or value is None:
        return 0.0
    if target in ("yes", "no"):
        if value in YES_WORDS:
            value = "yes"
        elif value in NO_WORDS:
            value = "no"
    return 1.0 if value == target else 0.0


def mean_relative_accuracy(prediction: Any, gold: Any) -> float:
    """MRA = (1/10) * sum over t in {0.50, 0.45, ..., 0.05} of [ |pred - gold| / |gold| < t ].

    Example: gold 10, pred 11 -> relative error 0.10 passes 0.50 ... 0.15 (8 bounds) -> 0.8.
    A gold of 0 has no relative error: only an exact 0 scores 1.
    """
    rel_err = relative_error(prediction, gold)
    if rel_err is None:
        return 0.0
    return sum(rel_err < bound for bound in MRA_THRESHOLDS) / len(MRA_THRESHOLDS)


def relative_error(prediction: Any, gold: Any) -> float | None:
    """|pred - gold| / |gold|, rounded to `REL_ERR_DECIMALS`; None when the prediction is no number.

    A gold of 0 has no relative error: an exact 0 counts as 0.0, anything else as infinity.
    """
    target = parse_number(gold)
    if target is None:
        raise ValueError(f"gold answer {gold!r} is not a number; check the question's answer_type")
    value = parse_number(prediction)
    if value is None:
        return None
    if target == 0:
        return 0.0 if value == 0 else math.inf
    return round(abs(value - target) / abs(target), REL_ERR_DECIMALS)


ACC10_BOUND = 0.10
"""Acc@10 accepts a relative error up to and including this bound (0.9 gold <= pred <= 1.1 gold)."""


def within_ten_percent(prediction: Any, gold: Any) -> float:
    """Acc@10: 1.0 when |pred - gold| <= 0.10 |gold|, the bound itself included; else 0.0.

    Example: gold 10 accepts 9.0 ... 11.0 and rejects 8.99 and 11.01. A gold of 0 has no
    relative error: only an exact 0 scores 1.
    """
    rel_err = relative_error(prediction, gold)
    return 1.0 if rel_err is not None and rel_err <= ACC10_BOUND else 0.0


def score_exact(prediction: Any, gold: Any) -> float:
    """Exact match: numerically equal for a numeric gold, else the normalised string match."""
    return score_int(prediction, gold) if parse_number(gold) is not None else score_str(prediction, gold)


SCORERS = {"int": score_int, "str": score_str, "float": mean_relative_accuracy}
METRICS = {"acc@10": within_ten_percent, "mra": mean_relative_accuracy, "exact": score_exact}
"""Metrics a question may choose instead of its answer type's rule (`Question.metric`)."""


def score_answer(prediction: Any, gold: Any, answer_type: str, metric: str | None = None) -> float:
    """Score one prediction with `metric` when given, else the rule of its answer type
    ("int", "float" or "str")."""
    if metric is not None:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; expected one of {sorted(METRICS)}")
        return float(METRICS[metric](prediction, gold))
    try:
        scorer = SCORERS[answer_type]
    except KeyError:
        raise ValueError(f"unknown answer_type {answer_type!r}; expected one of {sorted(SCORERS)}")
    return float(scorer(prediction, gold))


@dataclass(frozen=True)
class TypeScore:
    """Count and mean score of the questions of one answer type."""

    count: int
    mean: float


@dataclass(frozen=True)
class Summary:
    """Scores of a run: per answer type, weighted by count, and the plain mean over types."""

    per_type: dict[str, TypeScore] = field(default_factory=dict)
    count: int = 0
    total: float = 0.0
    mean_over_types: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "per_type": {k: {"count": v.count, "mean": v.mean} for k, v in self.per_type.items()},
            "count": self.count,
            "total": self.total,
            "mean_over_types": self.mean_over_types,
        }

    def to_markdown(self) -> str:
        lines = ["| answer type | count | score |", "|---|---:|---:|"]
        for name, part in self.per_type.items():
            lines.append(f"| {name} | {part.count} | {part.mean:.4f} |")
        lines.append(f"| **total (weighted)** | {self.count} | {self.total:.4f} |")
        lines.append(f"| **mean over types** | {len(self.per_type)} | {self.mean_over_types:.4f} |")
        return "\n".join(lines)


def summarize(scored: Iterable[tuple[str, float]]) -> Summary:
    """Summarise (answer_type, score) pairs; every pair counts, types in first-seen order."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for answer_type, value in scored:
        sums[answer_type] = sums.get(answer_type, 0.0) + float(value)
        counts[answer_type] = counts.get(answer_type, 0) + 1
    if not counts:
        return Summary()
    per_type = {k: TypeScore(count=counts[k], mean=sums[k] / counts[k]) for k in counts}
    count = sum(counts.values())
    return Summary(
        per_type=per_type,
        count=count,
        total=sum(sums.values()) / count,
        mean_over_types=sum(p.mean for p in per_type.values()) / len(per_type),
    )


def evaluate(rows: Iterable[tuple[Any, Any, str]]) -> Summary:
    """Score and summarise (prediction, gold, answer_type) rows in one pass."""
    return summarize((t, score_answer(p, g, t)) for p, g, t in rows)
