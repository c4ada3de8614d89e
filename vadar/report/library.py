"""The library section: every function of the API store with its versions and its users.

The store is read through `ApiStore.export()`, the same dict `vadar library export` writes, so a
report can be made from the SQLite database or from an exported JSON file alike (results shared
without their database often come with `library.json`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from vadar.library.story import helper_story
from vadar.report.highlight import highlight_python


@dataclass
class FunctionVersion:
    version: int
    status: str
    created_at: str
    code: Markup
    last_error: str | None
    attempts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class LibraryFunction:
    """A function's current version, its history and the questions of this run that called it."""

    name: str
    anchor: str
    signature: str
    docstring: str
    code: Markup
    status: str
    version: int
    last_error: str | None
    dependencies: list[str]
    dependents: list[str] = field(default_factory=list)
    versions: list[FunctionVersion] = field(default_factory=list)
    used_by: list[tuple[str, str]] = field(default_factory=list)  # (question id, anchor)
    story: list[str] = field(default_factory=list)  # how it got in: route, search, checks (`library.story`)

    @property
    def attempt_count(self) -> int:
        return sum(len(v.attempts) for v in self.versions)


@dataclass
class Library:
    """The functions of one store, where it was read from, or why it could not be."""

    source: str
    functions: list[LibraryFunction] = field(default_factory=list)
    problem: str | None = None

    def anchors(self) -> dict[str, str]:
        return {f.name: f.anchor for f in self.functions}

    def names(self) -> list[str]:
        return [f.name for f in self.functions]


def function_anchor(name: str) -> str:
    return "fn-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)


def read_export(path: Path) -> dict[str, Any]:
    """The export dict of a SQLite store or of an exported JSON file."""
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "functions" not in data:
            raise ValueError(f"{path} is not a library export (no 'functions')")
        return data
    from api_store import ApiStore

    with ApiStore(path, create=False) as store:
        return store.export()


def load_library(path: Path | None) -> Library:
    """Read the library at `path`; a missing or unreadable one is reported, never raised."""
    if path is None:
        return Library("", problem="no library database given")
    path = Path(path)
    if not path.is_file():
        return Library(str(path), problem=f"no library database at {path}")
    try:
        export = read_export(path)
    except Exception as exc:  # a broken store must not cost the rest of the report
        return Library(str(path), problem=f"cannot read the library at {path}: {exc}")
    return Library(str(path), functions_from_export(export.get("functions") or [], export.get("decisions") or []))


def functions_from_export(entries: Iterable[dict[str, Any]],
                          decisions: Iterable[dict[str, Any]] = ()) -> list[LibraryFunction]:
    by_function: dict[str, list[dict[str, Any]]] = {}
    for decision in decisions:
        if isinstance(decision, dict):
            by_function.setdefault(str(decision.get("name")), []).append(decision)
    functions = []
    for entry in entries:
        dependencies = list(dict.fromkeys(entry.get("dependencies") or []))
        anchors = {name: function_anchor(name) for name in dependencies}
        versions = [
            FunctionVersion(
                version=int(v.get("version", 0)), status=str(v.get("status", "")),
                created_at=str(v.get("created_at", "")),
                code=highlight_python(v.get("code")) if v.get("code") else Markup(""),
                last_error=v.get("last_error"), attempts=list(v.get("attempts") or []),
            )
            for v in entry.get("history") or []
        ]
        functions.append(LibraryFunction(
            name=str(entry["name"]), anchor=function_anchor(str(entry["name"])),
            signature=str(entry.get("signature") or ""), docstring=str(entry.get("docstring") or ""),
            code=highlight_python(entry.get("code"), anchors) if entry.get("code") else Markup(""),
            status=str(entry.get("status", "")), version=int(entry.get("version", 0)),
            last_error=entry.get("last_error"), dependencies=dependencies, versions=versions,
            story=helper_story(str(entry["name"]), by_function.get(str(entry["name"]), [])).lines,
        ))
    by_name = {f.name: f for f in functions}
    for function in functions:
        for dependency in function.dependencies:
            if dependency in by_name:
                by_name[dependency].dependents.append(function.name)
    return functions


def functions_called(program: str | None, names: Iterable[str]) -> list[str]:
    """Library functions a program calls by name (the rule the run summary counts with)."""
    if not program:
        return []
    return [name for name in names if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}\s*\(", program)]
