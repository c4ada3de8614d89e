"""Warehouse question families, in the four categories of the warehouse spatial-intelligence
challenge, each pointing at its objects by regions: the object's rendered mask as a COCO RLE, and
a `<mask>` token after a class word in the text ("Is the pallet <mask> to the left or the right of
the box <mask>?").

Answers come from the annotation alone: left and right by the x-centre of the projected 2D boxes,
"closest" by the range of the 3D centre from the camera, distances between 3D centres, and a
buffer region holds an object when the object's footprint centre lies in the zone's rectangle.
As for the other families, a question is not asked when its answer hinges on a near-tie.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from base_modules.masks import encode_rle
from omni3d_bench.generator.questions import DEPTH_MARGIN, LEFT_MARGIN_PX, _num, distance, drafts, x_center
from omni3d_bench.generator.warehouse import PLURALS, ZONE

INSIDE_MARGIN = 0.15
"""A count is only asked when every object of the class is this far (m) inside or outside the zone."""
WORDS = {ZONE: "buffer region"}
COUNTED = ("pallet", "box", "transporter")
HELD_SHARE = 0.75
"""How often a count asks about a class the zone holds at least one of (else any class present)."""

Obj = dict[str, Any]
Draft = tuple[str, Any, str, list[Obj], str | None, list[str]]
"""(question text, answer, answer_type, the objects its tokens point at in order, metric, the
words its gold program needs: the counted class, the side asked about, the choice)."""


def word(obj: Obj) -> str:
    """The class word before an object's token ("pallet", "buffer region")."""
    return WORDS.get(obj["category_name"], obj["category_name"])


def zone_local(point: list[float], zone: Obj) -> np.ndarray:
    """A world point's (x, y) in the zone's own frame (its rectangle is |x| <= w/2, |y| <= l/2)."""
    c, s = np.cos(zone["yaw_world"]), np.sin(zone["yaw_world"])
    d = np.subtract(point[:2], zone["center_world"][:2])
    return np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])


def inside_by(point: list[float], zone: Obj) -> float:
    """How far (m) a point lies inside the zone's rectangle (its distance to the nearest edge);
    negative outside, and then no farther out than the point really is."""
    half = np.asarray(zone["dimensions"][:2], float) / 2
    return float(np.min(half - np.abs(zone_local(point, zone))))


def range_from_camera(o: Obj) -> float:
    return float(np.linalg.norm(o["center_cam"]))


def _items(objects: list[Obj], zones: bool = False) -> list[Obj]:
    return [o for o in objects if zones or o["category_name"] != ZONE]


def _pick(rng: np.random.Generator, pool: list[Obj], k: int) -> list[Obj] | None:
    if len(pool) < k:
        return None
    return [pool[i] for i in rng.permutation(len(pool))[:k]]


def left_right(rng, objects) -> Draft | None:
    pair = _pick(rng, _items(objects, zones=True), 2)
    if pair is None or abs(x_center(pair[0]) - x_center(pair[1])) < LEFT_MARGIN_PX:
        return None
    a, b = pair
    text = f"Is the {word(a)} <mask> to the left or the right of the {word(b)} <mask>?"
    return text, "left" if x_center(a) < x_center(b) else "right", "str", [a, b], None, []


def left_right_yes_no(rng, objects) -> Draft | None:
    pair = _pick(rng, _items(objects, zones=True), 2)
    if pair is None or abs(x_center(pair[0]) - x_center(pair[1])) < LEFT_MARGIN_PX:
        return None
    a, b = pair
    side = ("left", "right")[int(rng.integers(2))]
    is_left = x_center(a) < x_center(b)
    text = f"Is the {word(a)} <mask> to the {side} of the {word(b)} <mask>?"
    return text, "yes" if is_left == (side == "left") else "no", "str", [a, b], None, [side]


CHOICES: dict[str, tuple[str, Callable[[Obj], float], float]] = {
    "leftmost": ("the leftmost", x_center, LEFT_MARGIN_PX),
    "rightmost": ("the rightmost", lambda o: -x_center(o), LEFT_MARGIN_PX),
    "closest": ("closest to the camera", range_from_camera, DEPTH_MARGIN),
}
"""which -> (the text's words, key whose smallest value wins, margin between first and second)."""


def mcq(rng, objects) -> Draft | None:
    by_class = {c: [o for o in objects if o["category_name"] == c]
                for c in sorted({o["category_name"] for o in _items(objects)})}
    classes = [c for c, pool in by_class.items() if len(pool) >= 3]
    if not classes:
        return None
    cls = classes[rng.integers(len(classes))]
    picked = _pick(rng, by_class[cls], min(len(by_class[cls]), int(rng.integers(3, 5))))
    if picked is None:
        return None
    which = sorted(CHOICES)[rng.integers(len(CHOICES))]
    label, key, margin = CHOICES[which]
    keys = sorted(key(o) for o in picked)
    if keys[1] - keys[0] < margin:
        return None
    answer = min(range(len(picked)), key=lambda i: key(picked[i]))
    tokens = ", ".join(["<mask>"] * (len(picked) - 1)) + " and <mask>"
    text = f"Among the {PLURALS[cls]} {tokens}, which is {label}?"
    return text, answer, "int", picked, None, [which]


def region_distance(rng, objects) -> Draft | None:
    pair = _pick(rng, _items(objects), 2)
    if pair is None:
        return None
    a, b = pair
    text = f"What is the distance between the {word(a)} <mask> and the {word(b)} <mask> in meters?"
    return text, _num(distance(a, b)), "float", [a, b], "acc@10", []


def count_in_zone(rng, objects) -> Draft | None:
    zones = [o for o in objects if o["category_name"] == ZONE]
    classes = sorted({o["category_name"] for o in objects} & set(COUNTED))
    if not zones or not classes:
        return None
    zone = zones[rng.integers(len(zones))]
    held = [c for c in classes if any(inside_by(o["center_world"], zone) > 0
                                      for o in objects if o["category_name"] == c)]
    if held and rng.uniform() < HELD_SHARE:
        classes = held
    cls = classes[rng.integers(len(classes))]
    margins = [inside_by(o["center_world"], zone) for o in objects if o["category_name"] == cls]
    if any(abs(m) < INSIDE_MARGIN for m in margins):
        return None
    text = f"How many {PLURALS[cls]} are in the buffer region <mask>?"
    return text, sum(m > 0 for m in margins), "int", [zone], "acc@10", [cls]


WAREHOUSE_FAMILIES: dict[str, Callable[[np.random.Generator, list[Obj]], Draft | None]] = {
    "left_right": left_right, "left_right_yes_no": left_right_yes_no, "mcq": mcq,
    "region_distance": region_distance, "count_in_zone": count_in_zone,
}


def warehouse_questions(annotation: dict[str, Any], instances: np.ndarray, rng: np.random.Generator,
                        per_scene: int) -> list[dict[str, Any]]:
    """Up to `per_scene` questions about one warehouse scene, each from a different family; each
    token's region is its object's rendered mask (`instances == mask_value`) and its id."""
    out: list[dict[str, Any]] = []
    for family, (text, answer, answer_type, objs, metric, words) in drafts(
            WAREHOUSE_FAMILIES, annotation["objects"], rng, per_scene):
        out.append({
            "question_id": f"{annotation['image_id']}_q{len(out)}",
            "image_id": annotation["image_id"], "image_filename": annotation["image_filename"],
            "question": text, "answer": str(answer), "answer_type": answer_type,
            "family": family, "object_ids": [o["id"] for o in objs],
            "regions": [{"mask": encode_rle(instances == o["mask_value"]), "object_id": o["id"]}
                        for o in objs],
            "phrases": words, **({"metric": metric} if metric else {}),
        })
    return out
