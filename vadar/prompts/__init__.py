"""Prompt templates live in `vadar/prompts/*.j2` and are loaded by name, never inlined in code."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("vadar", "prompts"),
        undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(template: str, **variables: Any) -> str:
    """Render `template` (its file name without the .j2 suffix) with `variables`."""
    return _environment().get_template(f"{template}.j2").render(**variables).strip() + "\n"


def template_names() -> list[str]:
    return sorted(n.removesuffix(".j2") for n in _environment().list_templates(extensions=["j2"]))
