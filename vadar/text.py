"""Shortening text for one-line display without cutting a word, call or number in half."""

from __future__ import annotations

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
