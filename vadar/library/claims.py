"""What a helper's name and signature claim it computes, in a form ground truth can check.

A helper's name is what every later program relies on: `_is_in_front(image, a, b)` will be
called for every "in front of" question, `_height_of_object(image, prompt)` for every "how tall"
one. So a name that states a relation, a shared attribute, one object's attribute
(`_color_of_object`) or a metric quantity is a claim, and `vadar.library.truth_checks` tests it on
ground-truth scenes. Names that claim nothing checkable (`_count_objects_by_type`) give no claim,
and no evidence either way.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from collections.abc import Iterable
from typing import Any

RELATION_WORDS = {"left": "left", "right": "right", "front": "front", "behind": "behind", "back": "behind",
                  "closer": "front", "nearer": "front", "farther": "behind", "further": "behind"}
ATTRIBUTE_WORDS = {"color": "color", "colour": "color", "shape": "shape", "material": "material", "size": "size"}
HEIGHT_WORDS = {"height", "tall", "taller", "tallness"}
DISTANCE_WORDS = {"distance", "depth", "far", "away"}
PIXEL_WORDS = {"pixel", "pixels", "px", "2d", "image", "relative", "ratio", "difference", "diff", "compare",
               "tallest", "shortest", "largest", "smallest", "count", "number"}
_BOX_ANNOTATIONS = ("bbox", "box", "list", "tuple")


@dataclass(frozen=True)
class Claim:
    """`kind`: "relation" (the objects in a relation to a reference), "same" (a shared attribute),
    "attribute" (one object's color, shape, material or size, as the data set names it),
    "relation_test" (yes/no: is the first object in the relation to the second), "measure" (one
    object's height or camera distance, metres) or "distance" (metres between two objects).
    `inputs` says, per required parameter after `image`, whether it takes a "phrase" (an object
    description for `loc`) or anything else, checked with a box ("box", "other"); a relation
    helper's second, list parameter takes the "candidates" to choose from (every object of the
    scene when checked), as in `_objects_in_front_of(image, reference: BBox, candidates: list[BBox])`."""

    kind: str
    value: str
    inputs: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.value}"


def name_words(name: str) -> list[str]:
    """A helper name's words: split at underscores, lower case."""
    return [w for w in re.split(r"_+", name.lower()) if w]


def named_relations(name: str) -> set[str]:
    """The spatial relations the words of a helper's name name (`_objects_left_of`: left; `_is_closer`:
    front), whatever its signature: what it covers, or a one-relation step a chain helper replaces."""
    return {RELATION_WORDS[w] for w in name_words(name) if w in RELATION_WORDS}


def claim_of(record: Any) -> Claim | None:
    """The checkable claim of a helper's name and signature, if it makes one."""
    words = name_words(record.name)
    try:
        node = ast.parse(f"def f{record.signature.strip().rstrip(':')}: pass").body[0]
    except SyntaxError:
        return None
    assert isinstance(node, ast.FunctionDef)
    args = node.args.args[: len(node.args.args) - len(node.args.defaults)]
    if not args or "not" in words:
        return None
    inputs = tuple(_input_kind(a) for a in args[1:])
    returns = ast.unparse(node.returns).lower() if node.returns else ""
    relations = named_relations(record.name)
    attributes = {ATTRIBUTE_WORDS[w] for w in words if w in ATTRIBUTE_WORDS}
    if len(relations) == 1 and returns.startswith("list") and (
            len(inputs) == 1 or (len(inputs) == 2 and _is_list(args[2]))):
        return Claim("relation", relations.pop(), (inputs[0], *(("candidates",) if len(inputs) == 2 else ())))
    if "same" in words and len(attributes) == 1 and len(inputs) == 2:
        return Claim("same", attributes.pop(), inputs)
    known = all(kind in ("box", "phrase") for kind in inputs)
    if not known or set(words) & PIXEL_WORDS:
        return None
    if len(attributes) == 1 and not relations and "same" not in words and len(inputs) == 1 and returns in ("", "str"):
        return Claim("attribute", attributes.pop(), inputs)
    if len(relations) == 1 and len(inputs) == 2 and (returns == "bool" or
                                                     (returns in ("", "str") and words[0] in ("is", "are"))):
        return Claim("relation_test", relations.pop(), inputs)
    if relations or attributes or returns not in ("", "float", "int"):
        return None
    if set(words) & HEIGHT_WORDS and len(inputs) == 1:
        return Claim("measure", "height", inputs)
    if set(words) & DISTANCE_WORDS and "camera" in words and len(inputs) >= 1:
        return Claim("measure", "camera_distance", inputs[:2])  # of the first object
    if set(words) & DISTANCE_WORDS and len(inputs) == 2:
        return Claim("distance", "between", inputs)
    return None


def claimed_helpers(functions: Iterable[Any], kind: str, inputs: tuple[str, ...]) -> dict[str, str]:
    """For each value of a claim of `kind` taking `inputs`, the first of `functions` making it:
    relations called `(image, reference_box, candidates)`, shared attributes `(image, box, box)`,
    a height `(image, box)`..."""
    found: dict[str, str] = {}
    for function in functions:
        claim = claim_of(function)
        if claim is not None and claim.kind == kind and claim.inputs == inputs:
            found.setdefault(claim.value, function.name)
    return found


def named_claim(name: str, signature: str) -> Claim | None:
    """The claim a name and signature make, before any code exists (a proposal)."""
    return claim_of(_Named(name, signature))


def claim_label(name: str, signature: str) -> str | None:
    """The label of the claim a name and signature make (`relation:left`), or None."""
    claim = named_claim(name, signature)
    return claim.label if claim is not None else None


@dataclass(frozen=True)
class _Named:
    name: str
    signature: str


def _is_list(arg: ast.arg) -> bool:
    """A parameter annotated as a list: the candidates a relation helper chooses from."""
    return bool(arg.annotation) and ast.unparse(arg.annotation).lower().startswith("list")


def _input_kind(arg: ast.arg) -> str:
    """"box" or "phrase" from the annotation, else from the name; "other" when neither says."""
    annotation = ast.unparse(arg.annotation).lower() if arg.annotation else ""
    name = arg.arg.lower()
    if annotation == "str":
        return "phrase"
    if annotation.startswith(_BOX_ANNOTATIONS):
        return "box"
    if annotation:
        return "other"
    if "box" in name:
        return "box"
    if any(w in name for w in ("prompt", "phrase", "name", "description", "noun", "label")):
        return "phrase"
    return "other"


@dataclass(frozen=True)
class CheckableName:
    """A helper stub whose name and signature make a claim ground truth decides, and what it claims."""

    stub: str
    says: str


CHECKABLE_NAMES: dict[str, tuple[CheckableName, ...]] = {
    "spatial": (CheckableName("_objects_left_of(image: Image, bbox: BBox) -> list[BBox]",
                              "the other objects left of the object in bbox"),
                CheckableName("_is_left_of(image: Image, bbox1: BBox, bbox2: BBox) -> bool",
                              "whether the first object is left of the second")),
    "shared": (CheckableName("_same_color(image: Image, bbox1: BBox, bbox2: BBox) -> bool",
                             "whether two objects share a color"),),
    "height": (CheckableName("_height_of_object(image: Image, bbox: BBox) -> float",
                             "the object's height in metres"),),
    "distance": (CheckableName("_distance_between(image: Image, bbox1: BBox, bbox2: BBox) -> float",
                               "metres between the two objects"),
                 CheckableName("_distance_from_camera(image: Image, bbox: BBox) -> float",
                               "metres from the camera to the object")),
}
"""Stubs the Signature agent is shown as names ground truth can check, by what the questions ask for.
Each parses to its claim (tests/library/test_claims.py)."""
