"""Hand-made CLEVR scene annotations, seen through CLEVR's default camera.

Tests and examples need tiny scenes whose answers are known by construction; this builds the
same annotation fields the renderer writes (`3d_coords`, `pixel_coords`, `relationships`,
`directions`) so the oracle modules treat them exactly like real scenes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from base_modules.oracle.clevr_camera import REFERENCE_FOCAL, REFERENCE_HEIGHT, REFERENCE_WIDTH

CAMERA_POSITION = np.array([7.36, -6.93, 4.96])
"""CLEVR's default camera position; it looks at the world origin."""
HALF_SIZES = {"large": 0.7, "small": 0.35}
RELATION_MARGIN = 0.2
"""CLEVR's renderer counts j as `rel` of i only past this margin along the direction."""


def camera_pose() -> tuple[np.ndarray, np.ndarray]:
    """World->camera rotation (rows: x right, y down, z forward) and translation."""
    forward = -CAMERA_POSITION / np.linalg.norm(CAMERA_POSITION)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    rotation = np.stack([right, np.cross(forward, right), forward])
    return rotation, -rotation @ CAMERA_POSITION


def camera_placed(right: float, behind: float) -> tuple[float, float]:
    """World (x, y) of the ground point `right` metres right of and `behind` metres farther than
    the origin, as the default camera sees it (a scene described as it looks in the image)."""
    rotation, _ = camera_pose()
    across = np.array(rotation[0][:2]) / np.linalg.norm(rotation[0][:2])
    away = np.array(rotation[2][:2]) / np.linalg.norm(rotation[2][:2])
    x, y = right * across + behind * away
    return float(x), float(y)


def synthetic_scene(objects: list[dict[str, Any]], image_filename: str = "synthetic.png",
                    ) -> dict[str, Any]:
    """A CLEVR scene from objects given as {color, size, shape, material, x, y[, rotation]}."""
    rotation, translation = camera_pose()
    out = []
    for spec in objects:
        coords = [float(spec["x"]), float(spec["y"]), HALF_SIZES[spec["size"]]]
        x, y, z = rotation @ np.array(coords) + translation
        u = REFERENCE_FOCAL * x / z + REFERENCE_WIDTH / 2
        v = REFERENCE_FOCAL * y / z + REFERENCE_HEIGHT / 2
        out.append({
            "color": spec["color"], "size": spec["size"], "shape": spec["shape"],
            "material": spec["material"], "rotation": float(spec.get("rotation", 0.0)),
            "3d_coords": coords, "pixel_coords": [int(round(u)), int(round(v)), float(z)],
        })
    right = np.array([rotation[0][0], rotation[0][1], 0.0])
    behind = np.array([rotation[2][0], rotation[2][1], 0.0])
    right, behind = right / np.linalg.norm(right), behind / np.linalg.norm(behind)
    directions = {"right": right, "left": -right, "behind": behind, "front": -behind}
    points = [np.array(o["3d_coords"]) for o in out]
    relationships = {
        name: [[j for j, pj in enumerate(points)
                if j != i and float((pj - pi) @ d) > RELATION_MARGIN]
               for i, pi in enumerate(points)]
        for name, d in directions.items()
    }
    return {
        "image_filename": image_filename,
        "objects": out,
        "relationships": relationships,
        "directions": {k: [float(c) for c in v] for k, v in directions.items()},
    }
