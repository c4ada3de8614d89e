"""How a failing ground-truth case names what went wrong: the objects by their attributes, where they
are, and what the helper returned against the truth (shown to the LLM that wrote the helper)."""

from __future__ import annotations

from typing import Any

from omni3d_bench.relations import ATTRIBUTES, object_attribute, object_measure, related_objects


def compare_objects(call: str, scene: dict[str, Any], boxes: list[list[float]], case: tuple[int, ...],
                     relation: str, value: Any) -> str | None:
    truth = related_objects(scene, case[0], relation)
    if truth is None:
        return None
    found = {box_index(boxes, b) for b in (value if isinstance(value, list) else [])}
    if None in found:
        return f"{call} returned something that is not one object's box"
    if case[0] in found:
        return f"{call} returned the reference object itself"
    if found != truth:
        missing, extra = sorted(truth - found), sorted(found - truth)
        where = lambda i: f"{describe(scene, i)} ({position(scene, boxes, i)})"  # noqa: E731
        return (f"{call}: missing {[where(i) for i in missing]}, wrongly included {[where(i) for i in extra]}; "
                f"the reference: {position(scene, boxes, case[0])}")
    return None


def position(scene: dict[str, Any], boxes: list[list[float]], index: int) -> str:
    """Where an object is, as a failing case shows it: its box centre x, and its depth where known."""
    box = boxes[index]
    depth = object_measure(scene, index, "camera_distance")
    return f"box centre x {(box[0] + box[2]) / 2:.0f}" + (f", depth {depth:.2f}" if depth is not None else "")


def relation_text(relation: str) -> str:
    return {"left": "left of", "right": "right of", "front": "in front of", "behind": "behind"}[relation]


def box_index(boxes: list[list[float]], box: Any) -> int | None:
    try:
        wanted = [float(v) for v in box]
    except (TypeError, ValueError):
        return None
    return next((i for i, b in enumerate(boxes) if b == wanted), None)


def describe(scene: dict[str, Any], index: int) -> str:
    words = [object_attribute(scene, index, a) for a in ATTRIBUTES if a != "shape"]
    shape = (object_attribute(scene, index, "shape") or object_attribute(scene, index, "category_name")
             or object_attribute(scene, index, "category") or "object")
    return " ".join([*(w for w in words if w), shape]) + f" #{index}"
