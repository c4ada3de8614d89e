"""The helper rules: names with exactly one leading underscore that no module, built-in, sandbox
or namespace name takes; code that is one plain `def` compiling under the sandbox policy; size
bounds on each helper and on the library shown per request."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from vadar.programs.helper_rules import (
    MAX_CODE_CHARS,
    MAX_DOCSTRING_CHARS,
    MAX_LIBRARY_CODE_CHARS,
    MAX_LIBRARY_STUB_CHARS,
    MAX_SIGNATURE_CHARS,
    HelperRuleError,
    LeftOut,
    check_helper,
    fit_library,
    name_problem,
)


@dataclass(frozen=True)
class Helper:
    name: str
    signature: str = "(x: int) -> int"
    docstring: str = "Twice x."
    code: str | None = None

    def __post_init__(self) -> None:
        if self.code is None:
            object.__setattr__(self, "code", f"def {self.name}(x):\n    return 2 * x\n")


BAD_NAMES = {
    "loc": "name of a module", "depth": "name of a module", "pick_region": "name of a module",
    "objects_3d": "name of a module", "len": "Python built-in", "sum": "Python built-in",
    "range": "Python built-in", "isinstance": "Python built-in", "print": "Python built-in",
    "math": "namespace binds", "image": "namespace binds", "views": "namespace binds", "region": "namespace binds",
    "final_result": "namespace binds", "_getattr_": "sandbox reserves", "_print_": "sandbox reserves",
    "_print": "sandbox reserves", "_write_": "sandbox reserves", "_tmp0": "sandbox reserves",
    "printed": "sandbox reserves", "__import__": "Python built-in", "__helper": "exactly one underscore",
    "helper": "exactly one underscore", "_": "exactly one underscore", "_left_": "sandbox reserves",
    "2fast": "not a valid Python name", "_a-b": "not a valid Python name", "class": "not a valid Python name",
}


@pytest.mark.parametrize("name", list(BAD_NAMES))
def test_a_name_that_would_replace_something_is_refused(name):
    assert BAD_NAMES[name] in name_problem(name)
    with pytest.raises(HelperRuleError, match=BAD_NAMES[name]):
        check_helper(name, "()", "doc", None)


@pytest.mark.parametrize("name", ["_left_of", "_count_red_things", "_x", "_Camera_X", "_objects_3d"])
def test_ordinary_helper_names_pass(name):
    assert name_problem(name) is None
    check_helper(name, "(x)", "doc", f"def {name}(x):\n    return x\n")


@pytest.mark.parametrize("code, reason", [
    ("def _h(x):\n    return ().__class__\n", "breaks the sandbox policy"),
    ("def _h(x):\n    return x.__dict__\n", "breaks the sandbox policy"),
    ("def _h(x):\n    class A:\n        pass\n    return x\n", "breaks the sandbox policy"),
    ("def _h(x):\n    return x._secret\n", "breaks the sandbox policy"),
    ("def _h(x):\n    return x\nimport os\n", "exactly one `def`"),
    ("def _g(x):\n    return x\n", "defines `_g` instead"),
])
def test_code_that_would_fail_every_program_is_refused(code, reason):
    with pytest.raises(HelperRuleError, match=reason):
        check_helper("_h", "(x)", "doc", code)


@pytest.mark.parametrize("part, size", [("signature", MAX_SIGNATURE_CHARS + 1), ("docstring", MAX_DOCSTRING_CHARS + 1),
                                        ("code", MAX_CODE_CHARS + 1)])
def test_each_text_has_a_bound(part, size):
    texts = {"signature": "(x)", "docstring": "doc", "code": "def _h(x):\n    return x\n"}
    texts[part] = texts[part] + " " * (size - len(texts[part])) if part != "code" else \
        "def _h(x):\n    return x" + " " * (size - 23) + "\n"
    with pytest.raises(HelperRuleError, match=f"its {part} has {size + (part == 'code'):,} characters"):
        check_helper("_h", texts["signature"], texts["docstring"], texts["code"])


def test_texts_must_be_text():
    with pytest.raises(HelperRuleError, match="its docstring must be text, not int"):
        check_helper("_h", "(x)", 3, None)


def test_fit_library_leaves_out_bad_helpers_and_what_the_bounds_cannot_hold(caplog, monkeypatch):
    monkeypatch.setattr("vadar.programs.helper_rules._warned", set())
    big = "x" * (MAX_DOCSTRING_CHARS - 100)
    stubs_fill = [Helper(f"_h{k}", docstring=big) for k in range(MAX_LIBRARY_STUB_CHARS // len(big) + 2)]
    helpers = [Helper("_first"), Helper("loc", code="def loc(image, prompt):\n    return [1] * 7\n"),
               Helper("_bad", code="def _bad():\n    return ().__class__\n"), *stubs_fill]
    left: list[LeftOut] = []
    kept = fit_library(helpers, on_left_out=left.append)
    assert kept[0].name == "_first" and all(h.name != "loc" and h.name != "_bad" for h in kept)
    assert sum(len(h.signature) + len(h.docstring) for h in kept) <= MAX_LIBRARY_STUB_CHARS
    assert [entry.name for entry in left[:2]] == ["loc", "_bad"]
    assert "fill the bound" in left[-1].reason and len(left) >= 4
    with caplog.at_level(logging.WARNING):
        fit_library(helpers)
        fit_library(helpers)  # once per helper and reason
    assert sum("library function loc is left out" in r.getMessage() for r in caplog.records) == 1


def test_the_code_bound_holds_across_helpers():
    body = "    return x\n" + "    # padding\n" * ((MAX_CODE_CHARS - 200) // 14)
    helpers = [Helper(f"_h{k}", code=f"def _h{k}(x):\n{body}") for k in range(MAX_LIBRARY_CODE_CHARS // len(body) + 3)]
    kept = fit_library(helpers, on_left_out=lambda left: None)
    assert 0 < len(kept) < len(helpers)
    assert sum(len(h.code or "") for h in kept) <= MAX_LIBRARY_CODE_CHARS


def test_a_name_with_a_lookalike_letter_is_refused():
    problem = name_problem("_objects_lеft_of")  # a Cyrillic е
    assert problem is not None and "non-ASCII character 'е' (U+0435)" in problem
    with pytest.raises(HelperRuleError, match="non-ASCII"):
        check_helper("_objects_lеft_of", "()", "doc", None)
