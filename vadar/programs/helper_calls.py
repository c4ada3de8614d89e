"""Build a test call for a new library function from real module outputs.

A new function is tested by running it in the sandbox on an image of the batch, with arguments
taken from the modules themselves (boxes from `loc`, the batch question...), never dummy stubs.
Arguments are chosen from each parameter's annotation and name; parameters with defaults are left
to their defaults.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

TEST_RESULT = "final_result"
GENERIC_WORDS = {"attribute": "color", "property": "color", "relation": "left", "direction": "left"}
"""Values for text parameters named after these words; a data set adds its own (`example_words`)."""


@dataclass(frozen=True)
class TestCall:
    """Program text that calls the function once and stores what it returned in `final_result`."""

    __test__ = False  # not a pytest test class

    code: str
    call: str


def build_test_call(name: str, signature: str, *, question: str, object_prompt: str = "objects",
                    words: Mapping[str, str] | None = None) -> TestCall:
    """Sandbox code calling `name` with arguments derived from real module outputs.

    `words` maps a parameter-name fragment ("color", "shape") to a value the data set's modules
    understand ("red", "cube"), so a test call asks for something that can exist in the image.
    """
    params = _parameters(name, signature)
    box_uses = 0
    arguments: list[str] = []
    for param, annotation in params:
        expr, used_box = _argument(param, annotation, question, box_uses, words or {})
        box_uses += used_box
        arguments.append(expr)
    call = f"{name}({', '.join(arguments)})"
    lines = []
    if any("test_boxes" in a for a in arguments):
        lines += [
            f"test_boxes = loc(image, {object_prompt!r})",
            "if len(test_boxes) == 0:",
            "    test_boxes = loc(image, 'objects')",
        ]
    lines.append(f"{TEST_RESULT} = {call}")
    return TestCall(code="\n".join(lines) + "\n", call=call)


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
              words: Mapping[str, str]) -> tuple[str, int]:
    """An expression for one parameter, and whether it consumed a distinct box."""
    kind = annotation.replace(" ", "").lower()
    lowered = param.lower()
    untyped = kind in ("", "any")  # only then do parameter names decide
    if kind == "image" or (untyped and lowered in ("image", "img")):
        return "image", 0
    if kind in ("list[bbox]", "list[list[float]]") or (untyped and lowered.endswith(("boxes", "objects"))):
        return "test_boxes", 0
    if kind == "bbox" or (untyped and re.search(r"box|object|obj|reference|target", lowered)):
        index = min(box_uses, 1)
        return f"test_boxes[{index} if len(test_boxes) > {index} else 0]", 1
    if kind in ("str", "", "any"):
        return repr(_text_argument(lowered, question, words)), 0
    if kind == "int":
        return "1", 0
    if kind == "float":
        return "1.0", 0
    if kind == "bool":
        return "True", 0
    if kind.startswith("tuple[float") or kind.startswith("list[float"):
        return "[0.0, 0.0]", 0
    return repr(_text_argument(lowered, question, words)), 0


def _text_argument(param: str, question: str, words: Mapping[str, str]) -> str:
    if "question" in param:
        return question
    for kind, word in {**GENERIC_WORDS, **words}.items():
        if kind in param:
            return word
    return "objects"
