"""How results show themselves in a notebook: the report's own page in a frame of its own.

The page is a whole HTML document with its stylesheet and script; set straight into a notebook's
output it would restyle the notebook, so it goes in an `<iframe srcdoc>` (sandboxed: its script
runs, but cannot reach the notebook).
"""

from __future__ import annotations

from html import escape

PAGE_HEIGHT_PX = 760


def framed(page: str, *, height: int = PAGE_HEIGHT_PX, title: str = "vadar") -> str:
    """`page` (a whole HTML document) as one `<iframe>` element for a notebook's output."""
    return (f'<iframe srcdoc="{escape(page, quote=True)}" title="{escape(title, quote=True)}" '
            f'sandbox="allow-scripts" style="width: 100%; height: {int(height)}px; border: 1px solid #d8dde3; '
            'border-radius: 4px;"></iframe>')
