"""`vadar library import` holds exports to the helper rules and to the shape the store reads:
the first bad entry refuses the whole file in one line naming it, and nothing is written."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api_store import ApiStore
from vadar.cli import app
from vadar.programs.helper_rules import MAX_DOCSTRING_CHARS, MAX_SIGNATURE_CHARS

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, ["library", *args],
                         env={"COLUMNS": "200", "VADAR_CONFIG": None, "VADAR_PATHS_DB_PATH": None})


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> dict[str, Any]:
    """An export of one helper with two versions, an attempt and a decision."""
    root = tmp_path_factory.mktemp("export")
    with ApiStore(root / "source.sqlite") as store:
        store.propose("_center", "(box: BBox) -> list[float]", "Centre of a box.", model="qwen")
        store.record_attempt("_center", 1, code="def _center(box):\n    return box\n", error="wrong", passed=False)
        store.implement("_center", "def _center(box):\n    return [(box[0] + box[2]) / 2]\n")
        store.record_decision("_center", "admitted", mode="outcome", evidence={"right": 3, "of": 3})
        return store.export()


def _refused(tmp_path: Path, data: Any, *fragments: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    target = tmp_path / "target.sqlite"
    result = _run("import", str(bad), "--db", str(target))
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: {bad}: ") and line.endswith("nothing was imported"), line
    for fragment in fragments:
        assert fragment in line, line
    with ApiStore(target) as store:
        assert store.functions(include_failed=True) == []


def _renamed(data: dict[str, Any], name: str, code: str | None = None) -> dict[str, Any]:
    data = copy.deepcopy(data)
    entry = data["functions"][0]
    entry["name"] = name
    for version in entry["history"]:
        version["name"] = name
        if version["code"] is not None:
            version["code"] = code or version["code"].replace("_center", name)
    for decision in data["decisions"]:
        decision["name"] = name
    return data


@pytest.mark.parametrize("name, why", [
    ("loc", "the name of a module"), ("len", "Python built-in"), ("range", "Python built-in"),
    ("isinstance", "Python built-in"), ("print", "Python built-in"), ("math", "namespace binds"),
    ("image", "namespace binds"), ("_getattr_", "the sandbox reserves"), ("_print_", "the sandbox reserves"),
    ("center", "exactly one underscore"),
])
def test_a_helper_named_after_something_a_program_needs_is_refused(tmp_path, export, name, why):
    _refused(tmp_path, _renamed(export, name), f"function {name}: ", why)


def test_a_dunder_name_is_refused(tmp_path, export):
    data = _renamed(export, "_center")
    data["functions"][0]["name"] = "__import__"
    _refused(tmp_path, data, "function __import__: ", "Python built-in")


@pytest.mark.parametrize("code, why", [
    ("def _center(box):\n    return ().__class__\n", "breaks the sandbox policy"),
    ("def _center(box):\n    return box.__dict__\n", "breaks the sandbox policy"),
    ("def _center(box):\n    return box._hidden\n", "breaks the sandbox policy"),
])
def test_a_helper_that_breaks_the_sandbox_policy_is_refused(tmp_path, export, code, why):
    _refused(tmp_path, _renamed(export, "_center", code), "function _center, version 2: ", why)


@pytest.mark.parametrize("field, size", [("docstring", MAX_DOCSTRING_CHARS + 1), ("signature", MAX_SIGNATURE_CHARS + 1)])
@pytest.mark.parametrize("version", [0, 1], ids=["proposal", "implemented"])
def test_texts_past_their_bound_are_refused_in_any_version(tmp_path, export, field, size, version):
    data = copy.deepcopy(export)
    data["functions"][0]["history"][version][field] = "x" * size
    _refused(tmp_path, data, f"function _center, version {version + 1}: ", f"its {field} has {size:,} characters")


def _set(*path: Any, value: Any = None, drop: bool = False) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        if drop:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


SCHEMA_BREAKS = {
    "missing signature": (_set("functions", 0, "history", 1, "signature", drop=True),
                          "function _center, version 2: 'signature' is a required property"),
    "version as text": (_set("functions", 0, "history", 1, "version", value="2"), "'version': '2' is not of type"),
    "current version as text": (_set("functions", 0, "version", value="2"), "function _center, 'version'"),
    "NaN in evidence": (_set("decisions", 0, "evidence", "right", value=float("nan")),
                        "decision #0, 'evidence', 'right': nan is not a JSON number"),
    "infinity in an attempt": (_set("functions", 0, "history", 0, "attempts", 0, "attempt", value=float("inf")),
                               "attempt #0, 'attempt': inf is not a JSON number"),
    "unknown status": (_set("functions", 0, "history", 1, "status", value="great"), "'status': 'great' is not one of"),
    "docstring as a number": (_set("functions", 0, "history", 1, "docstring", value=3), "'docstring': 3 is not of type"),
    "attempts not a list": (_set("functions", 0, "history", 0, "attempts", value=5), "5 is not of type 'array'"),
    "attempt without its number": (_set("functions", 0, "history", 0, "attempts", 0, "attempt", drop=True),
                                   "attempt #0: 'attempt' is a required property"),
    "decision without mode": (_set("decisions", 0, "mode", drop=True), "decision #0: 'mode' is a required property"),
    "dependencies as text": (_set("functions", 0, "history", 1, "dependencies", value="_x"), "'dependencies'"),
    "history entry not an object": (_set("functions", 0, "history", 0, value=7), "history entry #0: 7 is not of type"),
    "a version twice": (_set("functions", 0, "history", 0, "version", value=2), "holds a version number twice"),
    "decisions not a list": (_set("decisions", value={"a": 1}), "'decisions': {'a': 1} is not of type"),
    "evidence a list": (_set("decisions", 0, "evidence", value=[1]), "'evidence': [1] is not of type 'object'"),
    "implemented without code": (_set("functions", 0, "history", 1, "code", value=None),
                                 "an implemented version needs its code"),
}


@pytest.mark.parametrize("kind", list(SCHEMA_BREAKS))
def test_an_export_of_the_right_format_but_a_wrong_shape_is_one_line(tmp_path, export, kind):
    change, fragment = SCHEMA_BREAKS[kind]
    data = copy.deepcopy(export)
    change(data)
    _refused(tmp_path, data, fragment)


def test_a_function_twice_is_refused(tmp_path, export):
    data = copy.deepcopy(export)
    data["functions"].append(copy.deepcopy(data["functions"][0]))
    _refused(tmp_path, data, "function _center appears twice")


def test_the_rules_apply_to_every_function_all_or_nothing(tmp_path, export):
    data = copy.deepcopy(export)
    data["functions"].append(_renamed(export, "sum")["functions"][0])
    _refused(tmp_path, data, "function sum: ", "Python built-in")
