"""`vadar library import` (and `vadar library add`) hold helpers to the rules the agents keep and to
what the store can hold: a bounded number of helpers, no self-calls or cycles of calls (within the
file or with the library it joins), signatures that describe their code, whole version numbers, text
UTF-8 can hold. Each is refused in one line naming the entry, and nothing is written."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from api_store import ApiStore
from vadar.library.importing import LibraryImportError, import_library
from vadar.programs import helper_rules


def _export(tmp_path: Path, functions: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """An export of implemented helpers: name -> (signature, code)."""
    with ApiStore(tmp_path / "source.sqlite") as store:
        for name, (signature, code) in functions.items():
            store.propose(name, signature, "A helper.")
            store.implement(name, code)
            store.record_decision(name, "admitted", mode="hand", evidence={"right": 3})
        return store.export()


CENTER = {"_center": ("(box: BBox) -> float", "def _center(box):\n    return (box[0] + box[2]) / 2\n")}


def _refused(tmp_path: Path, data: Any, *fragments: str, store_path: Path | None = None) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    target = store_path or tmp_path / "target.sqlite"
    with ApiStore(target) as store:
        before = [f.name for f in store.functions(include_failed=True)]
        with pytest.raises(LibraryImportError) as info:
            import_library(store, path, replace=True)
        assert [f.name for f in store.functions(include_failed=True)] == before
    text = str(info.value)
    assert text.startswith(f"{path}: ") and text.endswith("nothing was imported") and "\n" not in text
    for fragment in fragments:
        assert fragment in text, text


@pytest.mark.parametrize(("where", "value", "fragment"), [
    (("functions", 0, "version"), 1e23, "function _center, 'version': 1e+23 is not a whole number"),
    (("functions", 0, "history", 0, "version"), 1e23, "'version': 1e+23 is not a whole number"),
    (("functions", 0, "version"), 10**23, "is greater than the maximum of 1000000"),
    (("decisions", 0, "version"), 1e23, "decision #0, 'version': 1e+23 is not a whole number"),
    (("functions", 0, "history", 0, "docstring"), "A \ud800 helper.", "holds a lone surrogate"),
    (("functions", 0, "name"), "_cent\udfffer", "holds a lone surrogate"),
])
def test_a_version_of_1e23_or_a_lone_surrogate_is_one_line(tmp_path, where, value, fragment):
    data = copy.deepcopy(_export(tmp_path, CENTER))
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    _refused(tmp_path, data, fragment)


def test_a_lone_surrogate_in_a_key_is_one_line(tmp_path):
    data = copy.deepcopy(_export(tmp_path, CENTER))
    data["decisions"][0]["evidence"]["\ud800"] = 1
    _refused(tmp_path, data, "decision #0, 'evidence'", "holds a lone surrogate")


def test_an_export_of_more_helpers_than_a_library_holds_is_refused_at_once(tmp_path):
    data = copy.deepcopy(_export(tmp_path, CENTER))
    data["functions"] = data["functions"] * 2_001  # the bound is checked before anything else is
    _refused(tmp_path, data, "2,001 functions, more than the 2,000 a library may hold")


def test_the_library_an_export_joins_stays_within_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(helper_rules, "MAX_LIBRARY_HELPERS", 2)
    target = tmp_path / "target.sqlite"
    with ApiStore(target) as store:
        for name in ("_a", "_b"):
            store.propose(name, "(x)", "A helper.")
            store.implement(name, f"def {name}(x):\n    return x\n")
    _refused(tmp_path, _export(tmp_path, CENTER), "the library has 2 other functions; with these 1",
             store_path=target)


@pytest.mark.parametrize(("functions", "fragment"), [
    ({"_count_down": ("(n)", "def _count_down(n):\n    return 0 if n <= 0 else _count_down(n - 1)\n")},
     "`_count_down` calls itself: recursion is not allowed"),
    ({"_a": ("(x)", "def _a(x):\n    return _b(x)\n"), "_b": ("(x)", "def _b(x):\n    return _c(x)\n"),
      "_c": ("(x)", "def _c(x):\n    return _a(x) + len(loc(x, 'o'))\n")}, "cycle of calls: _a -> _b -> _c -> _a"),
    ({"_center": ("(image: Image, bbox: BBox) -> float", "def _center(image, box):\n    return box[0]\n")},
     "function _center, version 2: helper _center: its signature says (image, bbox) but its code takes (image, box)"),
    ({"_center": ("(box, scale=2.0)", "def _center(box, scale):\n    return box[0] * scale\n")},
     "its signature says (box, scale=...) but its code takes (box, scale)"),
])
def test_what_the_agents_refuse_is_refused_on_import(tmp_path, functions, fragment):
    _refused(tmp_path, _export(tmp_path, functions), fragment)


def test_a_cycle_through_the_library_it_joins_is_refused(tmp_path):
    target = tmp_path / "target.sqlite"
    with ApiStore(target) as store:
        store.propose("_outer", "(x)", "A helper.")
        store.implement("_outer", "def _outer(x):\n    return _center(x)\n")
    export = _export(tmp_path, {"_center": ("(x)", "def _center(x):\n    return _outer(x)\n")})
    _refused(tmp_path, export, "with the library's functions: cycle of calls: _", store_path=target)


def test_helpers_that_call_each_other_without_a_cycle_import(tmp_path):
    export = _export(tmp_path, {"_a": ("(x)", "def _a(x):\n    return _b(x) + _b(x)\n"),
                                "_b": ("(x, k: int = 1)", "def _b(x, k=2):\n    return x * k\n")})
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(export))
    with ApiStore(tmp_path / "target.sqlite") as store:
        assert sorted(import_library(store, path)) == ["_a", "_b"]


@pytest.mark.parametrize(("source", "fragment"), [
    ('def _count_down(n):\n    """Zero."""\n    return 0 if n <= 0 else _count_down(n - 1)\n',
     "`_count_down` calls itself: recursion is not allowed"),
    ('def _a(x):\n    """A."""\n    return _b(x)\n\n\ndef _b(x):\n    """B."""\n    return _a(x)\n',
     "cycle of calls: _a -> _b -> _a"),
    ('def _center(x):\n    """Calls back into the library."""\n    return _outer(x)\n',
     "with the library's functions: cycle of calls: _"),
])
def test_library_add_keeps_the_same_rules(tmp_path, source, fragment):
    from vadar.library.hand import HandLibraryError, add_functions

    with ApiStore(tmp_path / "lib.sqlite") as store:
        store.propose("_outer", "(x)", "A helper.")
        store.implement("_outer", "def _outer(x):\n    return _center(x)\n")
        with pytest.raises(HandLibraryError, match="^" + fragment.replace("(", r"\(").replace(")", r"\)")):
            add_functions(store, source)
        assert [f.name for f in store.functions(include_failed=True)] == ["_outer"]
