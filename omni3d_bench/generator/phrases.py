"""How questions name objects: the shortest phrase that picks out exactly one object.

A program will pass these phrases to `loc`, so they use only catalogue words: a class name,
optionally preceded by a colour and/or a material adjective ("red wooden chair").
"""

from __future__ import annotations

from typing import Any

from omni3d_bench.generator.catalogue import BY_NAME

MATERIAL_ADJECTIVE = {"wood": "wooden", "metal": "metal", "plastic": "plastic"}

Obj = dict[str, Any]


def _phrase(obj: Obj, color: bool, material: bool) -> str:
    words = []
    if color:
        words.append(obj["color"])
    if material:
        words.append(MATERIAL_ADJECTIVE[obj["material"]])
    return " ".join([*words, obj["category_name"]])


def _matches(obj: Obj, ref: Obj, color: bool, material: bool) -> bool:
    return (obj["category_name"] == ref["category_name"]
            and (not color or obj["color"] == ref["color"])
            and (not material or obj["material"] == ref["material"]))


def describe(obj: Obj, objects: list[Obj]) -> str | None:
    """The shortest unique phrase for `obj` among `objects`, or None if none is unique."""
    for color, material in ((False, False), (True, False), (False, True), (True, True)):
        if sum(_matches(o, obj, color, material) for o in objects) == 1:
            return _phrase(obj, color, material)
    return None


def plural(category: str) -> str:
    return BY_NAME[category].plural_name
