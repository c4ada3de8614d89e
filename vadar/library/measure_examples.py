"""Worked examples composed of the library's measure helpers, for metric questions no helper
answers whole.

A build that admits `_height_of_object(image, bbox)` has answered the height; the programs still
have to call it. On 200 held-out questions of a generated seed, 17 of 20 "How tall is the chair in
meters?" programs returned `get_2D_object_size(image, chair)[1]` (pixels) beside an admitted, right
height helper that no worked example showed called, and "How tall is the object immediately to the
left of the cabinet?" took the first object `_objects_left_of` returned, not the nearest. Where the
build has no right program of the question's shape, the example is written here from the question's
shape alone, with made-up objects, as calls of the admitted helpers whose names claim the measure
(`claims.claim_of`: a height, a distance from the camera, a distance between two objects): one
object's measure, two heights divided ("How many times taller ..."), and the measure of the object
immediately left or right of a reference (the nearest in x on that side, found with the relation
helper). A question whose measure no such helper takes gets no example from here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from vadar.library.claims import claimed_helpers
from vadar.programs.api_text import ExampleCall
from vadar.programs.question_shape import shape_of


class _Function(Protocol):
    name: str
    signature: str


_NEIGHBOUR = re.compile(r"\b(?:immediately|directly|just) (?:to the )?(left|right)\b", re.IGNORECASE)
_ASKED = {"height": "How tall is the {} in meters?", "camera_distance": "How far is the {} from the camera, in meters?"}


def measure_example(question: str, functions: Sequence[_Function]) -> ExampleCall | None:
    """A worked program for a metric question of `question`'s shape as calls of the library's measure
    helpers (and, for an object immediately beside a reference, its relation helper); None where the
    measure it asks for has no helper."""
    shape = shape_of(question)
    if shape.answer != "measure":
        return None
    if shape.subject == "distance" and shape.relation in (None, "distance"):
        between = claimed_helpers(functions, "distance", ("box", "box")).get("between")
        return None if between is None else ExampleCall(
            "What is the distance between the lamp and the box in meters?",
            f'lamp = loc(image, "lamp")[0]\nbox = loc(image, "box")[0]\nfinal_result = {between}(image, lamp, box)')
    measured = {"height": "height", "depth": "camera_distance"}.get(shape.subject or "")
    measure = claimed_helpers(functions, "measure", ("box",)).get(measured) if measured else None
    if measure is None:
        return None
    if measured == "height" and shape.relation == "ratio":
        return ExampleCall("How many times taller is the lamp than the box?",
                           f'lamp = loc(image, "lamp")[0]\nbox = loc(image, "box")[0]\n'
                           f"final_result = {measure}(image, lamp) / {measure}(image, box)")
    beside = _NEIGHBOUR.search(question)
    if beside is not None and shape.relation == "spatial":
        return _neighbour(beside.group(1).lower(), measured, measure, functions)
    # "How far is the lamp from the camera?" parses as a comparison with the camera; "... than ..." is one
    one_object = shape.relation is None or (measured == "camera_distance" and shape.relation == "comparison"
                                            and " than " not in question)
    if not one_object:
        return None  # a difference, a comparison or a relation chain: not one object's measure
    return ExampleCall(_ASKED[measured].format("lamp"),
                       f'lamp = loc(image, "lamp")[0]\nfinal_result = {measure}(image, lamp)')


def _neighbour(side: str, measured: str, measure: str, functions: Sequence[_Function]) -> ExampleCall | None:
    """The measure of the object immediately `side` of a reference: of the objects the relation helper
    returns on that side, the one whose box centre is nearest the reference's in x."""
    alone = claimed_helpers(functions, "relation", ("box",)).get(side)
    chooser = claimed_helpers(functions, "relation", ("box", "candidates")).get(side)
    if alone is None and chooser is None:
        return None
    found = f"{alone}(image, box)" if alone is not None else f'{chooser}(image, box, loc(image, "objects"))'
    nearest = "max" if side == "left" else "min"  # left of it: the largest centre x among them
    asked = _ASKED[measured].format(f"object immediately to the {side} of the box")
    return ExampleCall(asked, "\n".join([
        'box = loc(image, "box")[0]',
        f"{side}s = {found}",
        f"nearest = {nearest}({side}s, key=lambda b: (b[0] + b[2]) / 2)  # immediately {side}: nearest in x",
        f"final_result = {measure}(image, nearest)"]))
