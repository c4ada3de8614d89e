"""Shortening text for one-line display without cutting a word, call or number in half."""

from __future__ import annotations

from typing import Any

ELLIPSIS = " …"


def clip(text: str, limit: int) -> str:
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
