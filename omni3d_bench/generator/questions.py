"""Question families in the spirit of Omni3D-Bench, answered exactly from the annotations.

Every family reads only the annotation dict (so answers can be re-derived from the JSON alone)
and refuses to ask when the answer would hinge on a near-tie: relations need a clear margin.
Left/right is judged in the image, by the x-centre of the objects' 2D boxes; "in front of" and
"closer to the camera" by camera-frame depth of the 3D centres; distances are between 3D centres;
heights and sizes are 3D box dimensions. All lengths are metres.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from omni3d_bench.generator.phrases import MATERIAL_ADJECTIVE, Obj, describe, plural

LEFT_MARGIN_PX = 15.0
DEPTH_MARGIN = 0.25
DIST_MARGIN = 0.3
HEIGHT_MARGIN = 0.10
FIT_MARGIN = 0.05
QUESTIONS_PER_SCENE = 6

Draft = tuple[str, Any, str, list[int]]
"""(question text, answer, answer_type, ids of the objects it is about)."""


def x_center(o: Obj) -> float:
    return (o["bbox2D_proj"][0] + o["bbox2D_proj"][2]) / 2


def height(o: Obj) -> float:
    return o["dimensions"][2]


def volume(o: Obj) -> float:
    return float(np.prod(o["dimensions"]))


def distance(a: Obj, b: Obj) -> float:
    return float(np.linalg.norm(np.subtract(a["center_world"], b["center_world"])))


def left_neighbour(ref: Obj, objects: list[Obj]) -> Obj | None:
    """The object immediately left of `ref` in the image, if clearly left and clearly nearest."""
    left = sorted((o for o in objects if x_center(o) < x_center(ref)), key=x_center, reverse=True)
    if not left or x_center(ref) - x_center(left[0]) < LEFT_MARGIN_PX:
        return None
    if len(left) > 1 and x_center(left[0]) - x_center(left[1]) < LEFT_MARGIN_PX:
        return None
    return left[0]


def nearest(ref: Obj, objects: list[Obj]) -> Obj | None:
    """The object closest (3D centres) to `ref`, if clearly closer than the runner-up."""
    others = sorted((o for o in objects if o is not ref), key=lambda o: distance(ref, o))
    if not others or (len(others) > 1
                      and distance(ref, others[1]) - distance(ref, others[0]) < DIST_MARGIN):
        return None
    return others[0]


def _named(rng: np.random.Generator, objects: list[Obj], k: int) -> list[tuple[Obj, str]] | None:
    """k distinct objects that each have a unique phrase, in random order."""
    named = [(o, p) for o in objects if (p := describe(o, objects))]
    if len(named) < k:
        return None
    return [named[i] for i in rng.permutation(len(named))[:k]]


def _num(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".")


def count_class(rng, objects) -> Draft | None:
    cats = sorted({o["category_name"] for o in objects})
    cat = cats[rng.integers(len(cats))]
    ids = [o["id"] for o in objects if o["category_name"] == cat]
    return f"How many {plural(cat)} are there?", len(ids), "int", ids


def count_attribute(rng, objects) -> Draft | None:
    o = objects[rng.integers(len(objects))]
    if rng.uniform() < 0.5:
        ids = [x["id"] for x in objects if x["color"] == o["color"]]
        return f"How many {o['color']} objects are there?", len(ids), "int", ids
    ids = [x["id"] for x in objects
           if x["material"] == o["material"] and x["category_name"] == o["category_name"]]
    text = f"How many {MATERIAL_ADJECTIVE[o['material']]} {plural(o['category_name'])} are there?"
    return text, len(ids), "int", ids


def count_relation(rng, objects) -> Draft | None:
    (ref, name), = _named(rng, objects, 1) or [(None, None)]
    if ref is None:
        return None
    others = [o for o in objects if o is not ref]
    if rng.uniform() < 0.5:
        gaps = [ref["depth"] - o["depth"] for o in others]
        if any(abs(g) < DEPTH_MARGIN for g in gaps):
            return None
        ids = [o["id"] for o, g in zip(others, gaps) if g > 0]
        return f"How many objects are closer to the camera than the {name}?", len(ids), "int", ids
    ratios = [height(o) / height(ref) for o in others]
    if any(abs(r - 1) < HEIGHT_MARGIN for r in ratios):
        return None
    ids = [o["id"] for o, r in zip(others, ratios) if r > 1]
    return f"How many objects are taller than the {name}?", len(ids), "int", ids


def metric_distance(rng, objects) -> Draft | None:
    pair = _named(rng, objects, 2)
    if pair is None:
        return None
    (a, na), (b, nb) = pair
    text = f"What is the distance between the {na} and the {nb} in meters?"
    return text, _num(distance(a, b)), "float", [a["id"], b["id"]]


def metric_height(rng, objects) -> Draft | None:
    (a, na), = _named(rng, objects, 1) or [(None, None)]
    if a is None:
        return None
    return f"How tall is the {na} in meters?", _num(height(a)), "float", [a["id"]]


def size_ratio(rng, objects) -> Draft | None:
    pair = _named(rng, objects, 2)
    if pair is None:
        return None
    (a, na), (b, nb) = sorted(pair, key=lambda p: -height(p[0]))
    if height(a) / height(b) < 1 + HEIGHT_MARGIN:
        return None
    text = f"How many times taller is the {na} than the {nb}?"
    return text, _num(height(a) / height(b)), "float", [a["id"], b["id"]]


def depth_difference(rng, objects) -> Draft | None:
    pair = _named(rng, objects, 2)
    if pair is None:
        return None
    (a, na), (b, nb) = sorted(pair, key=lambda p: -p[0]["depth"])
    if a["depth"] - b["depth"] < DEPTH_MARGIN:
        return None
    text = f"How much farther from the camera is the {na} than the {nb}, in meters?"
    return text, _num(a["depth"] - b["depth"]), "float", [a["id"], b["id"]]


def fit_count(rng, objects) -> Draft | None:
    pair = _named(rng, objects, 2)
    if pair is None:
        return None
    (a, na), (b, _) = sorted(pair, key=lambda p: -height(p[0]))
    ratio = height(a) / height(b)
    if ratio < 1 + FIT_MARGIN or ratio - math.floor(ratio) < FIT_MARGIN or \
            math.ceil(ratio) - ratio < FIT_MARGIN:
        return None
    text = (f"How many {plural(b['category_name'])} as tall as the {describe(b, objects)} could "
            f"be stacked on top of each other within the height of the {na}?")
    return text, math.floor(ratio), "int", [a["id"], b["id"]]


def yes_no(rng, objects) -> Draft | None:
    kind = ("left", "front", "taller", "closer")[rng.integers(4)]
    named = _named(rng, objects, 3 if kind == "closer" else 2)
    if named is None:
        return None
    (a, na), (b, nb) = named[:2]
    if kind == "left":
        gap, text = x_center(b) - x_center(a), f"Is the {na} to the left of the {nb}?"
        margin = LEFT_MARGIN_PX
    elif kind == "front":
        gap, text = b["depth"] - a["depth"], f"Is the {na} in front of the {nb}?"
        margin = DEPTH_MARGIN
    elif kind == "taller":
        gap, text = height(a) / height(b) - 1, f"Is the {na} taller than the {nb}?"
        margin = HEIGHT_MARGIN
    else:
        c, nc = named[2]
        gap = distance(a, c) - distance(a, b)
        text, margin = f"Is the {na} closer to the {nb} than to the {nc}?", DIST_MARGIN
    if abs(gap) < margin:
        return None
    return text, "yes" if gap > 0 else "no", "str", [o["id"] for o, _ in named]


CHOICES: dict[str, tuple[str, Callable[[Obj], float], float]] = {
    "tallest": ("tallest", height, HEIGHT_MARGIN),
    "largest": ("largest (by volume)", volume, 0.2),
    "closest": ("closest to the camera", lambda o: -o["depth"], DEPTH_MARGIN),
}


def multiple_choice(rng, objects) -> Draft | None:
    named = _named(rng, objects, 3)
    if named is None:
        return None
    key = sorted(CHOICES)[rng.integers(len(CHOICES))]
    label, score, margin = CHOICES[key]
    ranked = sorted(named, key=lambda p: -score(p[0]))
    first, second = score(ranked[0][0]), score(ranked[1][0])
    gap = (first - second) if key == "closest" else first / second - 1
    if gap < margin:
        return None
    a, b, c = (n for _, n in named)
    text = f"Which is the {label}: the {a}, the {b}, or the {c}?"
    return text, ranked[0][1], "str", [o["id"] for o, _ in named]


def multi_step_height(rng, objects) -> Draft | None:
    (ref, name), = _named(rng, objects, 1) or [(None, None)]
    target = left_neighbour(ref, objects) if ref is not None else None
    if target is None:
        return None
    text = f"How tall, in meters, is the object immediately to the left of the {name}?"
    return text, _num(height(target)), "float", [ref["id"], target["id"]]


def multi_step_color(rng, objects) -> Draft | None:
    (ref, name), = _named(rng, objects, 1) or [(None, None)]
    target = nearest(ref, objects) if ref is not None else None
    if target is None:
        return None
    text = f"What color is the object closest to the {name}?"
    return text, target["color"], "str", [ref["id"], target["id"]]


FAMILIES: dict[str, Callable[[np.random.Generator, list[Obj]], Draft | None]] = {
    "count_class": count_class, "count_attribute": count_attribute,
    "count_relation": count_relation, "metric_distance": metric_distance,
    "metric_height": metric_height, "size_ratio": size_ratio,
    "depth_difference": depth_difference, "fit_count": fit_count, "yes_no": yes_no,
    "multiple_choice": multiple_choice, "multi_step_height": multi_step_height,
    "multi_step_color": multi_step_color,
}


def drafts(families: dict[str, Callable[[np.random.Generator, Any], Any]], subject: Any,
           rng: np.random.Generator, per_scene: int) -> list[tuple[str, Any]]:
    """Up to `per_scene` (family, draft) pairs, families tried in a random order, each once."""
    names = list(families)
    out: list[tuple[str, Any]] = []
    for index in rng.permutation(len(names)):
        if len(out) == per_scene:
            break
        draft = families[names[index]](rng, subject)
        if draft is not None:
            out.append((names[index], draft))
    return out


def scene_questions(annotation: dict[str, Any], rng: np.random.Generator,
                    per_scene: int = QUESTIONS_PER_SCENE) -> list[dict[str, Any]]:
    """Up to `per_scene` questions about one scene, each from a different family."""
    out: list[dict[str, Any]] = []
    for family, (text, answer, answer_type, ids) in drafts(FAMILIES, annotation["objects"], rng,
                                                           per_scene):
        out.append({
            "question_id": f"{annotation['image_id']}_q{len(out)}",
            "image_id": annotation["image_id"],
            "image_filename": annotation["image_filename"],
            "question": text, "answer": str(answer), "answer_type": answer_type,
            "family": family, "object_ids": ids,
        })
    return out
