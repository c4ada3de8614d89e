"""Ground-truth spatial relations and attributes of a scene's objects, for checking helpers.

CLEVR scenes list, per relation and object, the objects in that relation to it
(`relationships["left"][i]`: the objects left of object i). Generated-benchmark scenes carry 2D
boxes and camera depth, and the generator judges left/right by the x-centre of the 2D box and
front/behind by depth (omni3d_bench.generator.questions); the same rules are applied here.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

RELATIONS = ("left", "right", "front", "behind")
ATTRIBUTES = ("color", "shape", "material", "size")

_IN_FRONT = "a is in front of b when depth(image, a) < depth(image, b)"
_BEHIND = "a is behind b when depth(image, a) > depth(image, b)"
_CAMERA = "an object's distance from the camera is depth(image, bbox)"
_SHARED = {a: f"a and b share a {a} when vqa(image, 'What {a} is this object?', a) == "
              f"vqa(image, 'What {a} is this object?', b)" for a in ATTRIBUTES}
_ATTRIBUTE = {f"attribute:{a}": f"an object's {a} is the word vqa(image, 'What {a} is this object?', bbox) answers, "
                                f"returned as it is" for a in ATTRIBUTES}
"""One object's attribute, keyed by the claim's label: the claim `attribute:size` is not `size`,
which says when two objects share one (shown for `_size_of_object`, 16 samples compared two
boxes, one of them undefined)."""

GENERATED_CONVENTIONS: dict[str, str] = {
    "left": "box a is left of box b when (a[0] + a[2]) / 2 < (b[0] + b[2]) / 2",
    "right": "box a is right of box b when (a[0] + a[2]) / 2 > (b[0] + b[2]) / 2",
    "front": _IN_FRONT, "behind": _BEHIND, "camera_distance": _CAMERA,
    "height": ("an object's height is the vertical extent of its 3D box, in metres; from the image, "
               "(bbox[3] - bbox[1]) * depth(image, bbox) / image.focal_length comes close"),
    "between": ("the distance between two objects is between their 3D centres, in metres, over all three axes: "
                "math.sqrt((x1 - x2) ** 2 + (y1 - y2) ** 2 + (z1 - z2) ** 2), where an object's centre is "
                "x = ((bbox[0] + bbox[2]) / 2 - image.width / 2) * d / image.focal_length, "
                "y = ((bbox[1] + bbox[3]) / 2 - image.height / 2) * d / image.focal_length, z = d, "
                "with d = depth(image, bbox)"),
    **{label: _ATTRIBUTE[label] for label in ("attribute:color", "attribute:material")},
}
"""How the generated benchmark's ground truth defines what helpers claim (the rules below), as
expressions an implementation can follow: shown when a helper is implemented by generate-and-test.
The distance names its three-term formula: told only each centre's x, y and z, 13 samples of a
build's `_distance_between_objects` left out z (the depth axis) or summed the axes."""

_CAMERA_X = "((x[0] + x[2]) / 2 - image.width / 2) * depth(image, x)"
CLEVR_CONVENTIONS: dict[str, str] = {
    "left": f"as CLEVR defines it, in 3D: box a is left of box b when {_CAMERA_X.replace('x', 'a')} < "
            f"{_CAMERA_X.replace('x', 'b')}",
    "right": f"as CLEVR defines it, in 3D: box a is right of box b when {_CAMERA_X.replace('x', 'a')} > "
             f"{_CAMERA_X.replace('x', 'b')}",
    "front": _IN_FRONT, "behind": _BEHIND, "camera_distance": _CAMERA, **_SHARED, **_ATTRIBUTE,
}
"""CLEVR's relations are 3D: the image x of a box centre, scaled by its depth, orders objects as
CLEVR's scene files do; the box centre alone does not for objects at different depths."""


def related_objects(scene: dict[str, Any], index: int, relation: str) -> set[int] | None:
    """Indices of the objects that are `relation` of object `index` (never `index`); None if unknown."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    objects = scene.get("objects") or []
    if not 0 <= index < len(objects):
        return None
    listed = (scene.get("relationships") or {}).get(relation)
    if listed is not None:
        return {int(i) for i in listed[index]} - {index}
    key = _geometric_key(relation)
    if key is None or any(key(o) is None for o in objects):
        return None
    sign = -1 if relation in ("left", "front") else 1
    ref = key(objects[index])
    return {i for i, o in enumerate(objects) if i != index and sign * (key(o) - ref) > 0}


def _geometric_key(relation: str) -> Any:
    if relation in ("left", "right"):
        return lambda o: (o["bbox2D_proj"][0] + o["bbox2D_proj"][2]) / 2 if o.get("bbox2D_proj") else None
    return lambda o: o.get("depth")


def object_attribute(scene: dict[str, Any], index: int, attribute: str) -> str | None:
    """The object's value of `attribute` (CLEVR: color, shape, material, size), or None."""
    objects = scene.get("objects") or []
    if not 0 <= index < len(objects):
        return None
    value = objects[index].get(attribute)
    return None if value is None else str(value)


MEASURES = ("height", "camera_distance")
_PHRASE_ATTRIBUTES = ("size", "color", "material")
_NOUNS = ("category_name", "category", "shape", "name", "label")


def object_measure(scene: dict[str, Any], index: int, measure: str) -> float | None:
    """A metric quantity of one object: its 3D box height, or its distance from the camera (metres).

    Scenes with metric 3D annotations (the generated benchmark: `dimensions`, `center_cam`) carry
    both; CLEVR scenes only the camera depth (`pixel_coords`); None otherwise. Height is the box's z extent, as the generator's questions use it.
    """
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    objects = scene.get("objects") or []
    if not 0 <= index < len(objects):
        return None
    obj = objects[index]
    if measure == "height":
        dims = obj.get("dimensions")
        return float(dims[2]) if dims and len(dims) == 3 else None
    centre = obj.get("center_cam")
    if centre and len(centre) == 3:
        return float(sum(v * v for v in centre) ** 0.5)
    pixel = obj.get("pixel_coords")  # CLEVR: (u, v, camera depth) of the object's centre
    return float(pixel[2]) if pixel and len(pixel) == 3 else None


def object_distance(scene: dict[str, Any], a: int, b: int) -> float | None:
    """Distance between two objects' 3D box centres in metres (None without metric annotations)."""
    objects = scene.get("objects") or []
    if not (0 <= a < len(objects) and 0 <= b < len(objects)):
        return None
    ca, cb = objects[a].get("center_world"), objects[b].get("center_world")
    if not ca or not cb:
        return None
    return float(sum((x - y) ** 2 for x, y in zip(ca, cb, strict=True)) ** 0.5)


def unique_phrase(scene: dict[str, Any], index: int) -> str | None:
    """The shortest phrase of the object's own attributes that no other object of the scene fits
    ("cabinet", "green stool", "large rubber cube"), or None when every phrase fits another one."""
    objects = scene.get("objects") or []
    if not 0 <= index < len(objects):
        return None

    def words(obj: dict[str, Any]) -> tuple[dict[str, str], str | None]:
        noun = next((str(obj[k]) for k in _NOUNS if obj.get(k) is not None), None)
        return {a: str(obj[a]) for a in _PHRASE_ATTRIBUTES if obj.get(a) is not None}, noun

    attributes, noun = words(objects[index])
    if noun is None:
        return None
    others = [words(o) for i, o in enumerate(objects) if i != index]
    names = list(attributes)
    for size in range(len(names) + 1):
        for chosen in combinations(names, size):
            if not any(n == noun and all(a.get(k) == attributes[k] for k in chosen) for a, n in others):
                return " ".join([*(attributes[k] for k in chosen), noun])
    return None


CLEAR_MARGINS = {"left": 10.0, "right": 10.0, "front": 0.1, "behind": 0.1}
"""Below these gaps (pixels of x-centre, metres of depth) a relation is too close to call."""


def relation_holds(scene: dict[str, Any], a: int, b: int, relation: str) -> bool | None:
    """Whether object `a` is `relation` of object `b`; None if unknown or too close to call."""
    related = related_objects(scene, b, relation)
    if related is None or a == b:
        return None
    if (scene.get("relationships") or {}).get(relation) is None:
        key = _geometric_key(relation)
        objects = scene["objects"]
        if abs(key(objects[a]) - key(objects[b])) < CLEAR_MARGINS[relation]:
            return None
    return a in related


NEAREST_MARGIN = 0.3  # metres: the runner-up must be this much farther (the generator's DIST_MARGIN)
NEIGHBOUR_MARGIN = 15.0  # pixels of box-centre x: the neighbour clear of the reference and of the next one


def nearest_object(scene: dict[str, Any], index: int) -> int | None:
    """The object nearest to object `index` by 3D centres, when clearly nearer than the runner-up;
    None without metric annotations or when too close to call."""
    others = sorted((d, i) for i in range(len(scene.get("objects") or []))
                    if i != index and (d := object_distance(scene, index, i)) is not None)
    if not others or (len(others) > 1 and others[1][0] - others[0][0] < NEAREST_MARGIN):
        return None
    return others[0][1]


def neighbour_object(scene: dict[str, Any], index: int, side: str) -> int | None:
    """The object immediately `side` ('left' or 'right') of object `index` in the image: of those whose
    box centre is on that side, the nearest in x, when clear of the reference and of the next one."""
    objects = scene.get("objects") or []
    key = _geometric_key("left")
    if not 0 <= index < len(objects) or any(key(o) is None for o in objects):
        return None
    sign = -1 if side == "left" else 1
    ref = key(objects[index])
    beside = sorted((sign * (key(o) - ref), i) for i, o in enumerate(objects) if i != index and sign * (key(o) - ref) > 0)
    if not beside or beside[0][0] < NEIGHBOUR_MARGIN or (len(beside) > 1 and beside[1][0] - beside[0][0] < NEIGHBOUR_MARGIN):
        return None
    return beside[0][1]


def object_depth(scene: dict[str, Any], index: int) -> float | None:
    """The camera-frame depth of the object's 3D centre (generated scenes), or None."""
    objects = scene.get("objects") or []
    depth = objects[index].get("depth") if 0 <= index < len(objects) else None
    return None if depth is None else float(depth)
