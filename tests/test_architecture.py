"""docs/architecture.md names every package and module of `vadar/`: the map stays true."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def sections() -> dict[str, str]:
    """Each `### `pkg/`` (or `#### `pkg/sub/``) heading's text, up to the next heading of any level."""
    found: dict[str, str] = {}
    parts = re.split(r"^(#{2,4} .*)$", DOC, flags=re.MULTILINE)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        match = re.match(r"#{3,4} `([\w/]+)/?`", heading)
        if match:
            found[match.group(1).rstrip("/")] = body
    return found


def test_every_package_and_module_of_vadar_is_on_the_map():
    named = sections()
    missing = []
    for package in sorted(p for p in (ROOT / "vadar").rglob("__init__.py")):
        folder = package.parent.relative_to(ROOT / "vadar").as_posix()
        key = "vadar" if folder == "." else folder
        body = named.get(key)
        if body is None:
            missing.append(f"{key}/ (no section)")
            continue
        for module in sorted(package.parent.glob("*.py")):
            if module.stem != "__init__" and f"`{module.stem}`" not in body:
                missing.append(f"{key}/{module.name}")
    assert not missing, f"docs/architecture.md does not name: {missing}"


def test_the_floors_on_the_map_are_the_floors_the_layering_test_checks():
    from test_layering import FLOORS

    table = DOC.split("## The floors of `vadar/`")[1].split("\n## ")[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \|", table, flags=re.MULTILINE)
    documented = [{name.strip("`/ ") for name in cell.split(",")} for _, cell in rows]
    assert documented == [set(floor) for floor in FLOORS]
