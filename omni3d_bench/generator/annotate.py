"""The annotation JSON of one scene: camera, and per object its class, attributes, 2D and 3D boxes.

Field names follow Omni3D where it has one (`category_name`, `center_cam`, `dimensions`,
`R_cam`, `bbox3D_cam`). Floats are rounded to 6 decimals so files are byte-identical per seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from omni3d_bench.generator.catalogue import CLASSES, COLORS, MATERIALS
from omni3d_bench.generator.geometry import Camera, box_corners, yaw_matrix
from omni3d_bench.generator.render import Rendering
from omni3d_bench.generator.scene import SceneObject

DECIMALS = 6


def _r(values: Any) -> Any:
    return np.round(np.asarray(values, dtype=float), DECIMALS).tolist()


def visible_box(mask: np.ndarray) -> list[float] | None:
    """Tight box of a boolean mask in pixel-edge coordinates, or None when empty."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return [float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)]


def object_annotation(index: int, obj: SceneObject, camera: Camera,
                      rendering: Rendering | None) -> dict[str, Any]:
    """`rendering` None: a scene made up without pixels (vadar's test scenes), no visibility fields."""
    rot_world = yaw_matrix(obj.yaw)
    rot_cam = camera.rotation @ rot_world
    center_cam = camera.to_camera(obj.center[None])[0]
    corners_world = box_corners(obj.center, obj.dims, rot_world)
    return {
        "id": index,
        "category_name": obj.category,
        "color": obj.color,
        "material": obj.material,
        "bbox2D_proj": _r(obj.box2d),
        **(_visibility(index, rendering) if rendering is not None else {}),
        "dimensions": _r(obj.dims),
        "center_world": _r(obj.center),
        "yaw_world": round(float(obj.yaw), DECIMALS),
        "center_cam": _r(center_cam),
        "depth": round(float(center_cam[2]), DECIMALS),
        "R_cam": _r(rot_cam),
        "bbox3D_world": _r(corners_world),
        "bbox3D_cam": _r(camera.to_camera(corners_world)),
    }


def _visibility(index: int, rendering: Rendering) -> dict[str, Any]:
    mask = rendering.instances == index + 1
    return {"bbox2D_visible": visible_box(mask), "visible_pixels": int(mask.sum()), "mask_value": index + 1}


def camera_annotation(camera: Camera) -> dict[str, Any]:
    return {
        "K": _r(camera.K),
        "world_to_camera": _r(camera.world_to_camera),
        "position": _r(camera.position),
        "convention": "camera x right, y down, z forward; world z up, ground plane z = 0",
    }


MATERIAL_SYNONYMS = {"wood": ["wooden"], "metal": ["metallic"], "plastic": []}


def vocabulary() -> dict[str, dict[str, list[str]]]:
    """The whole catalogue's words, so the oracle knows every class even if absent here."""
    return {
        "category": {c.name: list(c.synonyms) for c in CLASSES},
        "color": {c: [] for c in COLORS},
        "material": {m: MATERIAL_SYNONYMS[m] for m in MATERIALS},
    }


def scene_annotation(image_id: str, objects: list[SceneObject], camera: Camera,
                     rendering: Rendering, seed: int,
                     words: dict[str, dict[str, list[str]]] | None = None) -> dict[str, Any]:
    """`words`: the vocabulary to declare (default: the object catalogue's)."""
    return {
        "image_id": image_id,
        "image_filename": f"{image_id}.png",
        "depth_filename": f"{image_id}.png",
        "mask_filename": f"{image_id}.png",
        "seed": seed,
        "width": camera.width,
        "height": camera.height,
        "units": "meters",
        "camera": camera_annotation(camera),
        "vocabulary": vocabulary() if words is None else words,
        "objects": [object_annotation(i, o, camera, rendering) for i, o in enumerate(objects)],
    }
