"""`vadar library import`: read an export (`vadar library export`) into the home's library.

An export is data from elsewhere; its helpers would run before every program that has them in
its namespace, and their names, docstrings and signatures join every prompt. So before anything
is written the whole file is checked: at most `MAX_LIBRARY_HELPERS` functions, its shape against
`EXPORT_SCHEMA` (what the store reads of it; no NaN or infinity, no text UTF-8 cannot hold, versions
whole numbers up to `MAX_VERSION`), versions unique per function, every function's name and every
version's texts under the helper rules (`vadar.programs.helper_rules`: one leading underscore,
no module, built-in, sandbox or namespace name, size bounds), every implemented version one
plain `def` that compiles under the sandbox policy and takes the parameters its signature says, and
no helper calling itself or taking part in a cycle of calls, within the file or with the library it
joins, which must stay within `MAX_LIBRARY_HELPERS` too: the rules the agents keep. The first
problem refuses the whole file in one line that names the entry.
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
from vadar.programs.calls import called_names
from vadar.programs.helper_rules import (MAX_LIBRARY_HELPERS, HelperRuleError, call_problem, check_helper, check_name,
                                         joining_problem, signature_problem, stored_calls, text_problem)


class LibraryImportError(ValueError):
    """The file cannot be imported; the message names it and what is wrong."""


_TEXT = {"type": "string"}
_MAYBE_TEXT = {"type": ["string", "null"]}
MAX_VERSION = 1_000_000
"""Highest version or attempt number read: real libraries number a helper's versions in single
digits, and `1e23` overflowed the store's integers."""

_VERSION = {"type": "integer", "minimum": 1, "maximum": MAX_VERSION}
_ATTEMPT = {"type": "object", "required": ["attempt"], "properties": {
    "attempt": {"type": "integer", "minimum": 0, "maximum": MAX_VERSION}, "passed": {"type": ["boolean", "null"]},
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
    problem = (_count_problem(data) or _unstorable(data) or _schema_problem(data) or _version_problem(data)
               or _rule_problem(data) or call_problem(_current_calls(data)))
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


def _count_problem(data: dict[str, Any]) -> str | None:
    functions = data.get("functions")
    if isinstance(functions, list) and len(functions) > MAX_LIBRARY_HELPERS:
        return f"{len(functions):,} functions, more than the {MAX_LIBRARY_HELPERS:,} a library may hold"
    return None


_WHOLE_NUMBERS = ("version", "attempt")


def _unstorable(data: Any) -> str | None:
    """Where the export holds what the store cannot keep: NaN or an infinity (JSON has neither),
    text with a lone surrogate (`"\\ud800"` is valid JSON, but no UTF-8), or a version or attempt
    number written as a float (`1e23`, which a schema's "integer" lets through)."""
    stack: list[tuple[Any, list[Any]]] = [(data, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return f"{_where(data, path)}: {node!r} is not a JSON number"
        if isinstance(node, float) and path and path[-1] in _WHOLE_NUMBERS:
            return f"{_where(data, path)}: {node!r} is not a whole number"
        for text in ([node] if isinstance(node, str) else list(node) if isinstance(node, dict) else []):
            if isinstance(text, str) and not _utf8(text):
                return f"{_where(data, path)}: {ascii(text)[:80]} holds a lone surrogate, which is no UTF-8 text"
        if isinstance(node, dict):
            stack.extend((value, [*path, key]) for key, value in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((value, [*path, index]) for index, value in reversed(list(enumerate(node))))
    return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
                problem = signature_problem(name, version["signature"], version["code"])
                if problem is not None:
                    return f"{where}: {problem}"
            else:  # proposals and failed versions never run, but their texts are shown
                problem = text_problem(name, version["signature"], version["docstring"])
                if problem is not None:
                    return f"{where}: {problem}"
    return None


def _current_calls(data: dict[str, Any]) -> dict[str, set[str]]:
    """Each function's name to the names its current version's code calls (none when not implemented)."""
    calls = {}
    for entry in data["functions"]:
        current = next((v for v in entry["history"] if v["version"] == entry["version"]), None)
        code = current.get("code") if current and FunctionStatus(current["status"]).runs else None
        calls[entry["name"]] = called_names(code) if code else set()
    return calls


def import_library(store: ApiStore, path: Path, *, replace: bool = False, with_build: bool = False) -> list[str]:
    """Import every function of the export in `path` into `store`, or none; return their names.
    `with_build`: its build runs and worked examples too (`ApiStore.import_functions`)."""
    data = read_export(path)
    if isinstance(data, dict) and data.get("format") == "vadar-api-store":
        imported = _current_calls(data)
        problem = joining_problem(stored_calls(store.functions(include_failed=True), excluding=imported), imported)
        if problem is not None:
            raise LibraryImportError(f"{path}: {problem}; nothing was imported")
    try:
        return store.import_functions(data, replace=replace, with_build=with_build)
    except DuplicateFunctionError as exc:
        hint = "; add --replace to import it as a new version" if exc.name == exc.existing else ""
        raise LibraryImportError(f"{path}: {exc}{hint}; nothing was imported") from None
