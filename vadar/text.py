"""Text helpers shared by the whole package (standard library only: the sandbox worker imports them).

Two kinds of shortening: `one_line` for display (cut only at whitespace), and bounded text for
untrusted values (`clip`, `utf8_safe`, `bounded_repr`). Programs control the values that end up in
error messages, call logs and results. Python's own `repr` of a small object can be gigabytes long
(a tuple of a thousand references to a tuple of a thousand ...), can run program code (a container
subclass's `__repr__`), and may hold lone surrogates that no file or database accepts. The bounded
helpers walk plain containers themselves with a character budget, never call a `__repr__` other
than that of exact scalar types.
"""

from __future__ import annotations

from collections import deque
from typing import Any

ELLIPSIS = " …"


def one_line(text: str, limit: int) -> str:
    """`text` on one line, at most about `limit` characters, cut only at whitespace.

    A cut is marked with ` …`. A first word longer than `limit` is kept whole rather than cut
    mid-token: the reader gets fewer words, never a broken one. The full text stays where it was
    stored (for a function: `vadar library show NAME`).
    """
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    room = max(limit - len(ELLIPSIS), 0)
    cut = line.rfind(" ", 0, room + 1)
    if cut <= 0:
        cut = line.find(" ")
        if cut < 0:
            return line
    return line[:cut].rstrip() + ELLIPSIS


def rounded(value: Any, digits: int = 2) -> Any:
    """`value` with every float rounded for display (lists, tuples and dicts walked); files keep full precision."""
    if isinstance(value, bool) or not isinstance(value, float | list | tuple | dict):
        return value
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {key: rounded(item, digits) for key, item in value.items()}
    items = [rounded(item, digits) for item in value]
    return items if isinstance(value, list) else tuple(items)

_SCALARS = (type(None), bool, int, float, complex)
_MAX_DEPTH = 6
_BRACKETS: tuple[tuple[type, tuple[str, str]], ...] = (
    (dict, ("{", "}")), (list, ("[", "]")), (tuple, ("(", ")")), (deque, ("deque([", "])")),
    (frozenset, ("frozenset({", "})")), (set, ("{", "}")),
)


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how many were dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def utf8_safe(text: str) -> str:
    """`text` with lone surrogates written as `\\udXXX` escapes, so it can be stored anywhere."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def invalid_unicode(text: str) -> str | None:
    """Why `text` cannot be encoded as UTF-8 (a lone surrogate, as undecodable command-line bytes
    become), or None when it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.start + 1]
        return f"holds text that is not valid Unicode (a lone surrogate {bad!r} at character {exc.start})"
    return None


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit


def bounded_repr(value: Any, limit: int = 200) -> str:
    """A `repr`-like text of at most about `limit` characters, built without running program code."""
    parts: list[str] = []
    _walk(value, parts, _Budget(limit), 0)
    return clip("".join(parts), limit)


def _scalar_repr(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4000:
        return f"<int of about {int(value.bit_length() * 0.30103)} digits>"
    return repr(value)


def _walk(value: Any, parts: list[str], budget: _Budget, depth: int) -> None:
    if budget.left <= 0:
        return
    kind = type(value)
    if kind in _SCALARS:
        text = _scalar_repr(value)
    elif kind is str:
        text = repr(value[: budget.left + 1])
    elif kind in (bytes, bytearray):
        text = repr(bytes(value[: budget.left + 1]))
    elif isinstance(value, (list, tuple, set, frozenset, deque, dict)):
        _walk_container(value, parts, budget, depth)
        return
    else:
        name = getattr(kind, "__name__", "object")
        text = f"<{name if isinstance(name, str) else 'object'}>"
    budget.left -= len(text)
    parts.append(text)


def _walk_container(value: Any, parts: list[str], budget: _Budget, depth: int) -> None:
    opening, closing = next(pair for base, pair in _BRACKETS if isinstance(value, base))
    if depth >= _MAX_DEPTH:
        text = f"{opening}...{closing}"
        budget.left -= len(text)
        parts.append(text)
        return
    parts.append(opening)
    budget.left -= len(opening)
    items = dict.items(value) if isinstance(value, dict) else value
    try:
        for index, item in enumerate(items):
            if budget.left <= 0:
                parts.append(", ...")
                break
            if index:
                parts.append(", ")
                budget.left -= 2
            if isinstance(value, dict):
                key, item = item
                _walk(key, parts, budget, depth + 1)
                parts.append(": ")
                budget.left -= 2
            _walk(item, parts, budget, depth + 1)
    except RuntimeError:  # changed size during iteration
        parts.append("...")
    parts.append(closing)
    budget.left -= len(closing)
