"""Python syntax highlighting with Pygments, which escapes the code it formats.

Its output is the only HTML the templates take as already safe; every other string goes through
Jinja2's autoescaping, so a program containing `<script>` is shown as text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

CSS_CLASS = "code"
STYLE = "friendly"


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(cssclass=CSS_CLASS, style=STYLE)


def highlight_python(code: str | None, link_names: dict[str, str] | None = None) -> Markup:
    """Highlighted HTML for `code`; names in `link_names` become links to their anchors.

    Links are added to Pygments' own `<span class="n">name</span>` tokens after formatting, so
    only whole identifiers the lexer recognised are touched.
    """
    html = highlight(code or "", PythonLexer(), _formatter())
    if link_names:
        def link(match: re.Match[str]) -> str:
            name = match.group(2)
            anchor = link_names.get(name)
            if anchor is None:
                return match.group(0)
            return f'<a class="fn-link" href="#{anchor}">{match.group(0)}</a>'

        html = re.sub(r'(<span class="(?:n|nf)">)(_[A-Za-z0-9_]*)(</span>)', link, html)
    return Markup(html)


def stylesheet() -> str:
    """Pygments' CSS rules for the highlighted blocks."""
    return _formatter().get_style_defs(f".{CSS_CLASS}")
