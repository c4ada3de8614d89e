"""The Jinja2 environment of the report: autoescaping on for every template.

Values reach the HTML only through `{{ }}`, which escapes them; the few trusted fragments
(Pygments' highlighted code and its stylesheet) arrive as `Markup`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from vadar import __version__
from vadar.report.highlight import stylesheet
from vadar.report.library import function_anchor


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=PackageLoader("vadar.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["fn_anchor"] = function_anchor
    return env


def render(template: str, **context: Any) -> str:
    """Render a page of the report with the shared stylesheet."""
    page = environment().get_template(template)
    return page.render(version=__version__, code_css=Markup(stylesheet()), **context)


def write_page(path: Path, template: str, **context: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(template, **context), encoding="utf-8")
    return path
