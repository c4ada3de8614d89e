"""Made-up scenes in the benchmark's annotation format, from a few numbers per object.

A program's unit tests need small scenes whose answers are known, written by a language model; a
1.5B model can write a category, a colour, a material, where the object is as seen from the camera
and how big it is, but not a camera matrix or a projected box. So a sketch gives per object
`category`, `color`, `material`, its 3D centre's `x` (metres right of the camera's axis) and `z`
(depth, metres along the camera's axis), and its size `w`, `l`, `h` (metres). This module stands
each object on the floor, as every object of the generated benchmark stands, in front of one fixed
camera with the benchmark's intrinsics, and fills the rest exactly as the generator does: 3D boxes
in world and camera frames, depth, and the projected 2D box of the object's whole silhouette.
A sketch whose objects leave the image or overlap is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from omni3d_bench.generator.annotate import camera_annotation, object_annotation, vocabulary
from omni3d_bench.generator.catalogue import BY_NAME, CLASSES, COLORS, MATERIALS
from omni3d_bench.generator.geometry import Camera, amodal_box
from omni3d_bench.generator.scene import FOCAL, GAP, HEIGHT, WIDTH, SceneObject, in_frame, mostly_hidden

CAMERA = Camera(WIDTH, HEIGHT, FOCAL, position=np.array([0.0, 0.0, 1.8]), target=np.array([0.0, 4.5, 0.35]))
"""1.8 m above the floor, looking 18 degrees down (the generator's lowest elevation)."""

OBJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": [c.name for c in CLASSES]},
        "color": {"type": "string", "enum": sorted(COLORS)},
        "material": {"type": "string", "enum": list(MATERIALS)},
        "x": {"type": "number", "minimum": -4, "maximum": 4},
        "z": {"type": "number", "minimum": 1, "maximum": 12},
        "w": {"type": "number", "minimum": 0.05, "maximum": 3},
        "l": {"type": "number", "minimum": 0.05, "maximum": 3},
        "h": {"type": "number", "minimum": 0.05, "maximum": 3},
    },
    "required": ["category", "color", "material", "x", "z", "w", "l", "h"],
    "additionalProperties": False,
}
"""One sketched object; a JSON schema small enough for an endpoint's constrained decoding."""


class SketchError(ValueError):
    """A sketch that cannot be a scene: the message says which object and why, for the writer to fix."""


def describe(obj: Mapping[str, Any]) -> str:
    """One sketched object in words, for messages about it."""
    return (f"{obj['color']} {obj['material']} {obj['category']} at x={obj['x']:g}, z={obj['z']:g} "
            f"({obj['w']:g} x {obj['l']:g} x {obj['h']:g} m)")


def _standing(obj: Mapping[str, Any], camera: Camera) -> SceneObject:
    """The object whose 3D centre has camera-frame x and z as sketched and whose bottom is on the floor."""
    right, down, forward = camera.rotation  # world directions of the camera's axes
    dims = np.array([obj["w"], obj["l"], obj["h"]], float)
    # world height of the centre = h / 2 fixes the camera-frame y of the centre
    y = (dims[2] / 2 - camera.position[2] - obj["x"] * right[2] - obj["z"] * forward[2]) / down[2]
    centre = camera.position + obj["x"] * right + y * down + obj["z"] * forward
    position = centre - np.array([0.0, 0.0, dims[2] / 2])
    parts = BY_NAME[obj["category"]].parts(*dims)
    return SceneObject(obj["category"], obj["color"], obj["material"], dims, position, 0.0, parts,
                       amodal_box(parts, position, 0.0, camera))


def sketch_scene(objects: Sequence[Mapping[str, Any]], image_id: str = "unit-test",
                 camera: Camera = CAMERA) -> dict[str, Any]:
    """The annotation dict of the sketched scene, as the benchmark writes one (without pixel fields)."""
    placed = [_standing(obj, camera) for obj in objects]
    for k, (obj, scene_object) in enumerate(zip(objects, placed)):
        if scene_object.box2d[2] <= scene_object.box2d[0] or not in_frame(scene_object.box2d, camera):
            raise SketchError(f"object {k + 1} ({describe(obj)}) is not inside the image: keep z from 3 to 10 "
                              "and x between -z/3 and z/3")
        for j in range(k):
            apart = np.linalg.norm((scene_object.position - placed[j].position)[:2])
            if apart < scene_object.footprint_radius + placed[j].footprint_radius + GAP:
                raise SketchError(f"objects {j + 1} and {k + 1} ({describe(objects[j])}; {describe(obj)}) overlap: "
                                  "place them further apart")
    if mostly_hidden(placed, camera):
        raise SketchError("an object is mostly hidden behind nearer ones: spread the objects out in x")
    return {"image_id": image_id, "image_filename": f"{image_id}.png", "width": camera.width,
            "height": camera.height, "units": "meters", "camera": camera_annotation(camera),
            "vocabulary": vocabulary(),
            "objects": [object_annotation(i, o, camera, None) for i, o in enumerate(placed)]}
