"""Answer normalisation: what a program returned, as the plain value we store and score."""

from __future__ import annotations

import math
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
