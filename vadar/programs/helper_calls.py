"""Build a test call for a new library function from real module outputs.

A new function is tested by running it in the sandbox on an image of the batch, with arguments
taken from the modules themselves (boxes from `loc`, the batch question...), never dummy stubs.
Arguments are chosen from each parameter's annotation and name; parameters with defaults are left
to their defaults.

Every call a check makes of a helper (this test call, the ground-truth cases of
`vadar.library.truth_checks`) is a `watched_call`: a helper must not change its caller's data (an
`_objects_left_of` that begins with `candidates.remove(reference)` leaves the program's own list one
box short), so each argument is written down before the call and compared after it, inside the
sandbox where the call runs, and a changed one fails the call with the parameter's name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TEST_RESULT = "final_result"
GENERIC_WORDS = {"attribute": "color", "property": "color", "relation": "left", "direction": "left",
                 "asked": "shape", "shared": "color", "order": "more"}
"""Values for text parameters named after these words; a data set adds its own (`example_words`)."""

_VALUE_LIST = re.compile(r"`(?P<param>\w+)`(?P<gap>[^`(]{0,40})\(\s*"
                         r"(?P<values>'[^'\n]+'(?:(?:,\s*|,?\s+or\s+)'[^'\n]+')*)"
                         r"(?P<open>\s*,?\s*(?:\.\.\.|…|etc\b|or other|and other|and so on))?")
"""A parameter the docstring names with values in brackets: "The `asked` attribute ('color', ...)"."""


@dataclass(frozen=True)
class ValueList:
    """Values a docstring lists in brackets for a parameter it names."""

    parameter: str
    values: tuple[str, ...]
    right_after: bool  # the bracket follows the name ("`order` ('more', ...)"), no words between
    open: bool  # the list is left open ("'left', 'right', ..."): its values are examples


def value_lists(docstring: str) -> list[ValueList]:
    """Every bracketed list of quoted values a docstring gives for a parameter it names, in order."""
    return [ValueList(match.group("param"), tuple(re.findall(r"'([^'\n]+)'", match.group("values"))),
                      not match.group("gap").strip(), match.group("open") is not None)
            for match in _VALUE_LIST.finditer(docstring)]


def listed_values(docstring: str) -> dict[str, str]:
    """The first value a docstring lists for each parameter it names so: a test call of
    `_attribute_of_same(image, asked, ...)` that passed 'objects' for `asked` failed every one of 16
    samples in `vqa`, the right ones too, since no attribute is called "objects"."""
    values: dict[str, str] = {}
    for listed in value_lists(docstring):
        values.setdefault(listed.parameter, listed.values[0])
    return values


@dataclass(frozen=True)
class TestCall:
    """Program text that calls the function once and stores what it returned in `final_result`."""

    __test__ = False  # not a pytest test class

    code: str
    call: str


def build_test_call(name: str, signature: str, *, question: str, object_prompt: str = "objects",
                    words: Mapping[str, str] | None = None, docstring: str = "") -> TestCall:
    """Sandbox code calling `name` with arguments derived from real module outputs.

    `words` maps a parameter-name fragment ("color", "shape") to a value the data set's modules
    understand ("red", "cube"), so a test call asks for something that can exist in the image; a
    text parameter whose values the `docstring` lists gets the first of them.
    """
    params = _parameters(name, signature)
    listed = listed_values(docstring)
    box_uses = 0
    arguments: list[str] = []
    for param, annotation in params:
        expr, used_box = _argument(param, annotation, question, box_uses, words or {}, listed.get(param))
        box_uses += used_box
        arguments.append(expr)
    call = f"{name}({', '.join(arguments)})"
    lines = []
    if any("test_boxes" in a for a in arguments):
        lines += [  # two lines, so that the call stays on line 4 of what an error shows
            f"test_boxes = loc(image, {object_prompt!r})",
            "if len(test_boxes) == 0: test_boxes = loc(image, 'objects')",
        ]
    held = [(param, expr) for (param, _), expr in zip(params, arguments, strict=True) if "test_boxes" in expr]
    lines += watched_call(call, held)
    return TestCall(code="\n".join(lines) + "\n", call=call)


CHANGED_ARGUMENT = "changed its argument"
"""The words of a `watched_call`'s failure, by which a check tells it from the helper's own errors."""

SHOWN_CHARS = 120
"""How much of a changed argument, before and after the call, its refusal shows."""


def watched_call(call: str, held: Sequence[tuple[str, str]]) -> list[str]:
    """Sandbox lines that store `call`'s value in `final_result` and raise when the call changed an
    argument its caller holds: `held` pairs a parameter with the expression of what the caller
    passed there (a literal built for the call alone is nobody's data). Each held value is written
    down (`repr`, which shows every element of nested lists and dicts) on the line before the call
    and compared after it. The call's line is `final_result = <call>` as given, so an error inside
    the helper reads as the call."""
    helper = call.partition("(")[0]
    if not held:
        return [f"{TEST_RESULT} = {call}"]
    values = ", ".join(expression for _, expression in held)
    parameters = [parameter for parameter, _ in held]
    return [
        f"watched_arguments = [{values}]; watched_before = [repr(value) for value in watched_arguments]",
        f"{TEST_RESULT} = {call}",
        f"for watched_index, watched_parameter in enumerate({parameters!r}):",
        "    watched_after = repr(watched_arguments[watched_index])",
        "    if watched_after != watched_before[watched_index]:",
        f"        helper_changed_an_argument = ({helper!r} + ' {CHANGED_ARGUMENT} `' + watched_parameter"
        f" + '` (before the call: ' + watched_before[watched_index][:{SHOWN_CHARS}] + '; after: ' + watched_after[:{SHOWN_CHARS}]"
        " + '); a helper must not change its caller\\'s data: work on a copy, e.g. list(' + watched_parameter + ')')",
        "        raise ValueError(helper_changed_an_argument)",
    ]


def parameter_names(name: str, signature: str) -> list[str]:
    """Every positional parameter's name, in order; empty when the signature does not parse."""
    try:
        tree = ast.parse(f"def {name}{signature}:\n    pass\n")
    except SyntaxError:
        return []
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        return []
    return [a.arg for a in function.args.posonlyargs + function.args.args]


def list_parameters(name: str, signature: str) -> list[str]:
    """The parameters annotated as lists (the candidates a relation helper chooses from)."""
    try:
        return [param for param, annotation in _parameters(name, signature)
                if annotation.lower().startswith("list")]
    except SyntaxError:
        return []


def _parameters(name: str, signature: str) -> list[tuple[str, str]]:
    """(name, annotation text) of every parameter without a default."""
    tree = ast.parse(f"def {name}{signature}:\n    pass\n")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    args = function.args
    positional = args.posonlyargs + args.args
    required = positional[: len(positional) - len(args.defaults)]
    keyword_required = [a for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None]
    return [(a.arg, ast.unparse(a.annotation) if a.annotation else "") for a in required + keyword_required]


def _argument(param: str, annotation: str, question: str, box_uses: int,
              words: Mapping[str, str], listed: str | None = None) -> tuple[str, int]:
    """An expression for one parameter, and whether it consumed a distinct box; `listed` is the
    value the helper's docstring lists first for it."""
    kind = annotation.replace(" ", "").lower()
    lowered = param.lower()
    untyped = kind in ("", "any")  # only then do parameter names decide
    if kind == "image" or (untyped and lowered in ("image", "img")):
        return "image", 0
    if kind == "list[image]" or (untyped and lowered in ("views", "frames", "images")):
        return "views", 0  # the frames of a question about several (a helper reading them all)
    if kind in ("list[bbox]", "list[list[float]]") or (untyped and lowered.endswith(("boxes", "objects"))):
        return "test_boxes", 0
    if kind == "bbox" or (untyped and re.search(r"box|object|obj|reference|target", lowered)):
        index = min(box_uses, 1)
        return f"test_boxes[{index} if len(test_boxes) > {index} else 0]", 1
    if kind in ("str", "", "any"):
        return repr(_text_argument(lowered, question, words, listed)), 0
    if kind == "list[str]":
        # a chain of relations alternates noun phrases and relations: passed 'objects', every sample of a
        # CLEVR build's `_objects_along` failed in `loc` on the letter 's', the right ones too
        if "chain" in lowered:
            return repr(["objects", GENERIC_WORDS["relation"], "objects"]), 0
        return repr([_text_argument(lowered, question, words, listed)]), 0
    if kind == "int":
        return "1", 0
    if kind == "float":
        return "1.0", 0
    if kind == "bool":
        return "True", 0
    if kind.startswith("tuple[float") or kind.startswith("list[float"):
        return "[0.0, 0.0]", 0
    return repr(_text_argument(lowered, question, words, listed)), 0


def _text_argument(param: str, question: str, words: Mapping[str, str], listed: str | None) -> str:
    if "question" in param:
        return question
    if listed is not None:  # the docstring's own value comes before a word in the name
        return listed
    for kind, word in {**GENERIC_WORDS, **words}.items():
        if kind in param:
            return word
    return "objects"
