"""Multi-view question families in the spirit of VSI-Bench, answered exactly from the scene
annotation in world coordinates (see views.py).

Counts count each instance once across the frames; distances are between 3D box centres;
"size" is an object's longest 3D box dimension; room size is the floor area. The allocentric
direction stands at X facing Y (on the floor plane, world z up) and asks where Z is. Appearance
order is the first frame in which an object shows in the video. As for the single-image
families, a question is only asked when its answer does not hinge on a near-tie.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from omni3d_bench.generator.phrases import Obj, describe, plural
from omni3d_bench.generator.questions import DIST_MARGIN, _num, distance, drafts

DIRECTION_MARGIN_DEG = 12.0
"""Relative direction needs this many degrees away from straight ahead and from the 135-degree
boundaries between left/right and behind."""
BEHIND_DEG = 135.0

Draft = tuple[str, Any, str, list[int], list[str]]
"""(question text, answer, answer_type, object ids, the phrases it names objects by)."""


def _named(rng: np.random.Generator, objects: list[Obj],
           k: int | None) -> list[tuple[Obj, str]] | None:
    """k (None: all) objects that each have a unique phrase, in random order."""
    named = [(o, p) for o in objects if (p := describe(o, objects))]
    if k is not None and len(named) < k:
        return None
    return [named[i] for i in rng.permutation(len(named))[:k]]


def direction(standing: Obj, facing: Obj, target: Obj) -> str | None:
    """'left', 'right' or 'behind' of `target` for one standing at `standing` facing `facing`;
    None when it lies within the margin of a boundary."""
    x, y, z = (np.array(o["center_world"][:2]) for o in (standing, facing, target))
    f, v = y - x, z - x
    angle = math.degrees(math.atan2(f[0] * v[1] - f[1] * v[0], float(f @ v)))
    turn = abs(angle)
    if turn > BEHIND_DEG + DIRECTION_MARGIN_DEG:
        return "behind"
    if DIRECTION_MARGIN_DEG < turn < BEHIND_DEG - DIRECTION_MARGIN_DEG:
        return "left" if angle > 0 else "right"
    return None


def object_count(rng, scene) -> Draft | None:
    objects = scene["objects"]
    cats = sorted({o["category_name"] for o in objects})
    cat = cats[rng.integers(len(cats))]
    ids = [o["id"] for o in objects if o["category_name"] == cat]
    return f"How many {plural(cat)} are there in the room?", len(ids), "int", ids, [cat]


def abs_distance(rng, scene) -> Draft | None:
    pair = _named(rng, scene["objects"], 2)
    if pair is None:
        return None
    (a, na), (b, nb) = pair
    text = f"What is the distance between the {na} and the {nb} in meters?"
    return text, _num(distance(a, b)), "float", [a["id"], b["id"]], [na, nb]


def object_size(rng, scene) -> Draft | None:
    (a, na), = _named(rng, scene["objects"], 1) or [(None, None)]
    if a is None:
        return None
    text = f"How long is the longest dimension (length, width or height) of the {na} in meters?"
    return text, _num(max(a["dimensions"])), "float", [a["id"]], [na]


def room_size(rng, scene) -> Draft | None:
    room = scene["room"]
    text = "What is the floor area of this room in square meters?"
    return text, _num(room["width"] * room["length"]), "float", [], []


def relative_distance(rng, scene) -> Draft | None:
    named = _named(rng, scene["objects"], 4)
    if named is None:
        return None
    (ref, nref), *choices = named
    ranked = sorted(choices, key=lambda p: distance(ref, p[0]))
    if distance(ref, ranked[1][0]) - distance(ref, ranked[0][0]) < DIST_MARGIN:
        return None
    a, b, c = (n for _, n in choices)
    text = f"Which of these objects is closest to the {nref}: the {a}, the {b}, or the {c}?"
    return text, ranked[0][1], "str", [o["id"] for o, _ in named], [nref, a, b, c]


def relative_direction(rng, scene) -> Draft | None:
    named = _named(rng, scene["objects"], 3)
    if named is None:
        return None
    (x, nx), (y, ny), (z, nz) = named
    answer = direction(x, y, z)
    if answer is None:
        return None
    text = (f"If I am standing by the {nx} and facing the {ny}, is the {nz} to my left, to my "
            "right, or behind me?")
    return text, answer, "str", [x["id"], y["id"], z["id"]], [nx, ny, nz]


def appearance_order(rng, scene) -> Draft | None:
    """The answer is drawn first, then two objects that first show in strictly later frames."""
    named = _named(rng, scene["objects"], None) or []
    for first, name in named:
        later = [p for p in named if p[0]["first_frame"] > first["first_frame"]]
        if len(later) >= 2:
            picked = [(first, name), *(later[i] for i in rng.permutation(len(later))[:2])]
            options = [picked[i] for i in rng.permutation(3)]
            a, b, c = (n for _, n in options)
            text = (f"Which of these objects appears first in the video: the {a}, the {b}, "
                    f"or the {c}?")
            return text, name, "str", [o["id"] for o, _ in options], [a, b, c]
    return None


VIEW_FAMILIES: dict[str, Callable[[np.random.Generator, dict[str, Any]], Draft | None]] = {
    "object_count": object_count, "abs_distance": abs_distance, "object_size": object_size,
    "room_size": room_size, "relative_distance": relative_distance,
    "relative_direction": relative_direction, "appearance_order": appearance_order,
}


def view_questions(scene: dict[str, Any], rng: np.random.Generator,
                   per_scene: int) -> list[dict[str, Any]]:
    """Up to `per_scene` questions about one multi-view scene, each from a different family."""
    frames = scene["frames"]
    out: list[dict[str, Any]] = []
    for family, (text, answer, answer_type, ids, phrases) in drafts(VIEW_FAMILIES, scene, rng,
                                                                    per_scene):
        out.append({
            "question_id": f"{scene['scene_id']}_q{len(out)}",
            "image_id": frames[0]["image_id"], "image_filename": frames[0]["image_filename"],
            "scene_id": scene["scene_id"],
            "view_ids": [f["image_id"] for f in frames],
            "view_filenames": [f["image_filename"] for f in frames],
            "question": text, "answer": str(answer), "answer_type": answer_type,
            "family": family, "object_ids": ids, "phrases": phrases,
        })
    return out
