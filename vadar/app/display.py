"""How results show themselves in a notebook: the report's own page in a frame of its own.

The page is a whole HTML document with its stylesheet and script; set straight into a notebook's
output it would restyle the notebook, so it goes in an `<iframe srcdoc>` (sandboxed: its script
runs, but cannot reach the notebook). The frame grows to its page: the page's script posts its
height to the frame's parent whenever it changes (`report.js`), and a script beside the frame
sets it, so the reader scrolls the notebook, never a box inside it. Where output scripts do not
run (a code host's static view), the frame keeps the height it was given.
"""

from __future__ import annotations

import uuid
from html import escape

PAGE_HEIGHT_PX = 760

_GROW = """<script>(function () {
  var frame = document.getElementById("%s");
  window.addEventListener("message", function (event) {
    var height = event.data && event.data.vadarPageHeight;
    if (frame && event.source === frame.contentWindow && typeof height === "number" && height > 0) {
      frame.style.height = Math.ceil(height) + "px";
    }
  });
}());</script>"""


def framed(page: str, *, height: int = PAGE_HEIGHT_PX, title: str = "vadar") -> str:
    """`page` (a whole HTML document) as an `<iframe>` for a notebook's output, `height` pixels
    high until its page says how high it is."""
    frame_id = f"vadar-{uuid.uuid4().hex[:12]}"
    return (f'<iframe srcdoc="{escape(page, quote=True)}" id="{frame_id}" title="{escape(title, quote=True)}" '
            f'sandbox="allow-scripts" style="display: block; box-sizing: content-box; width: 100%; height: {int(height)}px; '
            'border: 1px solid #d8dde3; border-radius: 4px;"></iframe>' + _GROW % frame_id)
