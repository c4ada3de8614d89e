"""A small annotated warehouse scene (two pallets, a box, a floor zone) for the region tool tests.

Written the way the benchmark generator writes annotations: world z up, camera x right, y down,
z forward, `bbox3D_world` the 8 corners of each yawed box.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image as PILImage

from base_modules.masks import encode_rle

WIDTH, HEIGHT, FOCAL = 200, 120, 150.0
CAMERA_HEIGHT = 1.5


def yaw(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def to_camera(world: np.ndarray) -> np.ndarray:
    """Camera at (0, 0, CAMERA_HEIGHT) looking along world +y."""
    world = np.asarray(world, float)
    return np.stack([world[..., 0], CAMERA_HEIGHT - world[..., 2], world[..., 1]], axis=-1)


def project(world: np.ndarray) -> np.ndarray:
    cam = to_camera(world)
    return np.stack([FOCAL * cam[..., 0] / cam[..., 2] + WIDTH / 2,
                     FOCAL * cam[..., 1] / cam[..., 2] + HEIGHT / 2], axis=-1)


def make_object(ident: int, category: str, centre: list[float], dims: list[float], angle: float) -> dict[str, Any]:
    centre_w, dims_a = np.array(centre), np.array(dims)
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    corners = centre_w + (signs * dims_a / 2) @ yaw(angle).T
    uv = project(corners)
    box = [float(uv[:, 0].min()), float(uv[:, 1].min()), float(uv[:, 0].max()), float(uv[:, 1].max())]
    cam = to_camera(centre_w)
    return {"id": ident, "category_name": category, "color": "brown", "material": "wood",
            "bbox2D_proj": box, "dimensions": dims, "center_world": centre, "yaw_world": angle,
            "center_cam": cam.tolist(), "depth": float(cam[2]), "bbox3D_world": corners.tolist()}


OBJECTS = [
    make_object(0, "pallet", [-1.0, 5.0, 0.2], [1.2, 1.0, 0.4], 0.3),
    make_object(1, "pallet", [1.5, 7.0, 0.2], [1.2, 1.0, 0.4], -0.2),
    make_object(2, "box", [0.2, 4.2, 0.3], [0.6, 0.6, 0.6], 0.0),
    make_object(3, "buffer", [-0.6, 5.0, 0.005], [3.0, 2.5, 0.01], 0.5),
]


def scene() -> dict[str, Any]:
    K = [[FOCAL, 0.0, WIDTH / 2], [0.0, FOCAL, HEIGHT / 2], [0.0, 0.0, 1.0]]
    return {"image_id": "wh_000", "width": WIDTH, "height": HEIGHT, "camera": {"K": K},
            "vocabulary": {"category": {"pallet": [], "box": ["boxes"], "buffer": []},
                           "color": {"brown": []}, "material": {"wood": []}},
            "objects": OBJECTS}


def box_mask(box: list[float]) -> np.ndarray:
    mask = np.zeros((HEIGHT, WIDTH), bool)
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    mask[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = True
    return mask


def region_record(index: int, *, with_id: bool = True) -> dict[str, Any]:
    record: dict[str, Any] = {"mask": encode_rle(box_mask(OBJECTS[index]["bbox2D_proj"])),
                              "box": OBJECTS[index]["bbox2D_proj"]}
    if with_id:
        record["object_id"] = index
    return record


def write_bench(root: Path, questions: list[dict[str, Any]]) -> Path:
    """A generated-benchmark directory holding this one scene and `questions` about it."""
    for sub in ("images", "annotations", "questions"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "benchmark.json").write_text(json.dumps({"format": "vadar-bench"}))
    PILImage.new("RGB", (WIDTH, HEIGHT), (180, 180, 180)).save(root / "images" / "wh_000.png")
    (root / "annotations" / "wh_000.json").write_text(json.dumps(scene()))
    items = [{"image_id": "wh_000", "image_filename": "wh_000.png", **q} for q in questions]
    (root / "questions" / "test.json").write_text(json.dumps({"questions": items}))
    return root
