"""JSON encoding of program answers, so `True`, `3` and `3.0` come back as the types they were.

Generated programs often return NumPy scalars or arrays. They are converted by duck typing
(`.item()` / `.tolist()`) so this package needs no NumPy import; anything else that JSON cannot
represent is refused with a `StoreError` rather than silently turned into a string.
"""

from __future__ import annotations

import json
from typing import Any

from api_store.errors import StoreError


def _to_jsonable(value: Any) -> Any:
    if hasattr(value, "tolist") and callable(value.tolist):  # arrays (and NumPy scalars)
        return value.tolist()
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    raise TypeError(f"answer of type {type(value).__name__} is not JSON-serialisable")


def encode_answer(answer: Any) -> str | None:
    """JSON text for `answer`; `None` stays SQL NULL so "no answer" is easy to query.

    NaN and infinities use Python's JSON dialect, which `decode_answer` reads back unchanged.
    """
    if answer is None:
        return None
    try:
        text = json.dumps(answer, default=_to_jsonable, ensure_ascii=False)
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON's \uXXXX escapes keep it exactly
        return json.dumps(answer, default=_to_jsonable)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot store answer {answer!r:.200}: {exc}") from exc
    return text


def decode_answer(text: str | None) -> Any:
    """Inverse of `encode_answer`."""
    return None if text is None else json.loads(text)
