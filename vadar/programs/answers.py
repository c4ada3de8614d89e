"""Answer normalisation: what a program returned, as the plain value we store and score."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from vadar.text import bounded_repr

ERROR_ANSWER = "<error>"
"""Stored as the answer of a question whose program never ran successfully; scored wrong."""


def normalize_answer(value: Any) -> Any:
    """numpy -> Python, bool -> 'yes'/'no', whole floats kept as floats, strings stripped.

    Never loses an answer: unknown objects become their `str()`, never "".
    """
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        value = value.item()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isnan(value):
            return "nan"
        return value
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [normalize_answer(v) for v in value]
    if hasattr(value, "tolist"):
        return normalize_answer(value.tolist())
    return bounded_repr(value, MAX_ANSWER_CHARS)


MAX_ANSWER_CHARS = 2000
"""Text kept of an answer that is neither a scalar nor a list (a set, a dict): enough to read,
bounded so that a huge or pathological value cannot stall or blow up the host."""


def is_number(value: Any) -> bool:
    """An int or a float, and not a bool (a yes/no answer is no number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_float(value: Any) -> float | None:
    """`value` as a float, or None when it is no number or no float holds it (`10**400`).

    Never raises: every comparison and every box drawn from a program's values goes through it.
    """
    if not is_number(value):
        return None
    try:
        return float(value)
    except (OverflowError, ValueError, TypeError):
        return None


def same_answer(a: Any, b: Any, rel_tol: float) -> bool:
    """The one rule by which two answers are the same (votes, unit tests); it never raises.

    Numbers within `rel_tol` of each other (and 1e-9 absolute) are one answer; two ints beyond the
    float range only when equal; a number no float holds is unequal to every float. Strings are
    equal but for case and surrounding spaces; anything else by `==`, where a bool is not a number
    (True == 1 in Python, not here). A value that cannot be compared is unequal.
    """
    if is_number(a) and is_number(b):
        x, y = as_float(a), as_float(b)
        if x is None or y is None:
            return isinstance(a, int) and isinstance(b, int) and a == b
        return math.isclose(x, y, rel_tol=rel_tol, abs_tol=1e-9)
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    try:
        return isinstance(a, bool) == isinstance(b, bool) and bool(a == b)
    except Exception:  # noqa: BLE001 - an answer whose == raises (or recurses too deep) is unequal
        return False


def region_number(value: Any, regions: Sequence[Any], answer_type: str) -> Any:
    """A program's answer that names one of the question's regions, as that region's number.

    "Which of <pallet_0>, <pallet_1> and <pallet_2> is leftmost?" is answered by a number, yet a
    program that found the region may return its identifier ("<pallet_2>", "pallet_2") or the
    box `region(2)` gave it. Both name region 2 unambiguously. Anything else is left as it is.
    """
    if answer_type != "int" or not regions:
        return value
    if isinstance(value, str):
        text = value.strip().strip("<>").strip()
        names = [str(r.name).strip("<>") for r in regions]
        return names.index(text) if text in names else value
    if isinstance(value, list | tuple) and len(value) == 4:
        box = [as_float(v) for v in value]
        if any(v is None or not math.isfinite(v) for v in box):
            return value  # not a box of numbers (`[10**400, 0, 0, 0]` included)
        matches = [k for k, r in enumerate(regions)
                   if all(abs(a - float(b)) <= 0.5 for a, b in zip(box, r.box, strict=True))]  # type: ignore[operator]
        return matches[0] if len(matches) == 1 else value
    return value
