"""`vadar library import`: read an export (`vadar library export`) into the home's library.

An export is data from elsewhere; its helpers would run before every program that has them in
its namespace, and their names, docstrings and signatures join every prompt. So before anything
is written the whole file is checked: its shape against `EXPORT_SCHEMA` (what the store reads of
it; no NaN or infinity anywhere), versions unique per function, every function's name and every
version's texts under the helper rules (`vadar.programs.helper_rules`: one leading underscore,
no module, built-in, sandbox or namespace name, size bounds), and every implemented version one
plain `def` that compiles under the sandbox policy. The first problem refuses the whole file in
one line that names the entry.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from api_store import ApiStore, DuplicateFunctionError
from api_store.records import STATUS_NAMES, FunctionStatus
from vadar.programs.helper_rules import HelperRuleError, check_helper, check_name, text_problem


class LibraryImportError(ValueError):
    """The file cannot be imported; the message names it and what is wrong."""


_TEXT = {"type": "string"}
_MAYBE_TEXT = {"type": ["string", "null"]}
_VERSION = {"type": "integer", "minimum": 1}
_ATTEMPT = {"type": "object", "required": ["attempt"], "properties": {
    "attempt": {"type": "integer", "minimum": 0}, "passed": {"type": ["boolean", "null"]},
    **{key: _MAYBE_TEXT for key in ("prompt_hash", "code", "error", "test_call", "test_result", "model",
                                    "created_at")}}}
_HISTORY_ENTRY = {"type": "object", "required": ["version", "signature", "docstring", "status"], "properties": {
    "version": _VERSION, "signature": _TEXT, "docstring": _TEXT,
    "status": {"enum": list(STATUS_NAMES)},
    "dependencies": {"type": "array", "items": _TEXT}, "attempts": {"type": "array", "items": _ATTEMPT},
    **{key: _MAYBE_TEXT for key in ("code", "last_error", "model", "created_at", "updated_at")}}}
EXPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "functions"],
    "properties": {
        "functions": {"type": "array", "items": {
            "type": "object", "required": ["name", "version", "history"],
            "properties": {"name": _TEXT, "version": _VERSION,
                           "history": {"type": "array", "minItems": 1, "items": _HISTORY_ENTRY}}}},
        "decisions": {"type": ["array", "null"], "items": {
            "type": "object", "required": ["name", "version", "decision", "mode"],
            "properties": {"name": _TEXT, "version": _VERSION, "decision": _TEXT, "mode": _TEXT,
                           "evidence": {"type": ["object", "null"]}, "created_at": _MAYBE_TEXT}}},
    },
}
"""What `api_store` reads of an export (`ApiStore.export` writes more: runs, programs, hashes)."""


def read_export(path: Path) -> dict[str, Any]:
    """The export in `path`, checked whole; `LibraryImportError` names the first bad entry."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LibraryImportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise LibraryImportError(f"{path} is not a JSON library export: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != "vadar-api-store":
        return data  # the store says what is not an export
    problem = _non_finite(data) or _schema_problem(data) or _version_problem(data) or _rule_problem(data)
    if problem is not None:
        raise LibraryImportError(f"{path}: {problem}; nothing was imported")
    return data


def _schema_problem(data: dict[str, Any]) -> str | None:
    error = best_match(jsonschema.Draft202012Validator(EXPORT_SCHEMA).iter_errors(data))
    if error is None:
        return None
    return f"{_where(data, list(error.absolute_path))}: {error.message[:200]}"


def _where(data: Any, path: list[Any]) -> str:
    """`function _center, version 2, attempt #0, 'passed'` for a path into the export."""
    words: list[str] = []
    node, parent_key = data, None
    for position, key in enumerate(path):
        child = node[key] if isinstance(node, (list, dict)) else None
        listed = position + 1 < len(path) and isinstance(path[position + 1], int)
        if isinstance(key, int) and parent_key == "functions":
            name = child.get("name") if isinstance(child, dict) else None
            words.append(f"function {name}" if isinstance(name, str) else f"function #{key}")
        elif isinstance(key, int) and parent_key == "history":
            version = child.get("version") if isinstance(child, dict) else None
            words.append(f"version {version}" if isinstance(version, int) else f"history entry #{key}")
        elif isinstance(key, int):
            words.append(f"{str(parent_key or 'entrie')[:-1]} #{key}")
        elif not (listed and key in ("functions", "history", "attempts", "decisions")):
            words.append(f"'{key}'")
        node, parent_key = child, key
    return ", ".join(words) or "the export"


def _non_finite(data: Any) -> str | None:
    """Where the export holds NaN or an infinity (JSON has neither; the store refuses them)."""
    stack: list[tuple[Any, list[Any]]] = [(data, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return f"{_where(data, path)}: {node!r} is not a JSON number"
        if isinstance(node, dict):
            stack.extend((value, [*path, key]) for key, value in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((value, [*path, index]) for index, value in reversed(list(enumerate(node))))
    return None


def _version_problem(data: dict[str, Any]) -> str | None:
    names: set[str] = set()
    for entry in data["functions"]:
        if entry["name"] in names:
            return f"function {entry['name']} appears twice"
        names.add(entry["name"])
        versions = [version["version"] for version in entry["history"]]
        if len(set(versions)) != len(versions):
            return f"function {entry['name']}: its history holds a version number twice"
    return None


def _rule_problem(data: dict[str, Any]) -> str | None:
    """The first function or version that breaks a helper rule, as `function NAME, version N: why`."""
    for entry in data["functions"]:
        name = entry["name"]
        try:
            check_name(name)
        except HelperRuleError as exc:
            return f"function {name}: {exc}"
        for version in entry["history"]:
            where = f"function {name}, version {version['version']}"
            if FunctionStatus(version["status"]).runs:
                if version.get("code") is None:
                    return f"{where}: an implemented version needs its code"
                try:
                    check_helper(name, version["signature"], version["docstring"], version["code"])
                except HelperRuleError as exc:
                    return f"{where}: {exc}"
            else:  # proposals and failed versions never run, but their texts are shown
                problem = text_problem(name, version["signature"], version["docstring"])
                if problem is not None:
                    return f"{where}: {problem}"
    return None


def import_library(store: ApiStore, path: Path, *, replace: bool = False) -> list[str]:
    """Import every function of the export in `path` into `store`, or none; return their names."""
    data = read_export(path)
    try:
        return store.import_functions(data, replace=replace)
    except DuplicateFunctionError as exc:
        hint = "; add --replace to import it as a new version" if exc.name == exc.existing else ""
        raise LibraryImportError(f"{path}: {exc}{hint}; nothing was imported") from None
