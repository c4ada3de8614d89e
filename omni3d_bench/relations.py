"""Ground-truth spatial relations and attributes of a scene's objects, for checking helpers.

CLEVR scenes list, per relation and object, the objects in that relation to it
(`relationships["left"][i]`: the objects left of object i). Generated-benchmark scenes carry 2D
boxes and camera depth, and the generator judges left/right by the x-centre of the 2D box and
front/behind by depth (omni3d_bench.generator.questions); the same rules are applied here.
"""

from __future__ import annotations

from typing import Any

RELATIONS = ("left", "right", "front", "behind")
ATTRIBUTES = ("color", "shape", "material", "size")


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
