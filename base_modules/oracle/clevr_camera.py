"""Recover a CLEVR scene's camera from its own annotations.

CLEVR scenes record each object's world position (`3d_coords`) and its projection
(`pixel_coords` = [u, v, camera depth]) but not the camera. With the renderer's pinhole
intrinsics known, every object back-projects to a camera-frame point, so the world->camera
transform is a rigid fit between two point sets (Kabsch). Boxes and the left/right axis all
hinge on this fit, so its residual is kept for inspection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from base_modules.module import ModuleError

REFERENCE_WIDTH = 480
REFERENCE_HEIGHT = 320
REFERENCE_FOCAL = 525.0
"""Intrinsics of CLEVR's renderer at 480x320; other image sizes scale them linearly."""

MIN_FIT_OBJECTS = 3
MAX_FIT_RESIDUAL = 0.25
"""World units; a worse fit means the annotations do not come from one pinhole camera."""


class CameraFitError(ModuleError):
    """The scene's annotations cannot determine a camera (too few or collinear objects)."""


@dataclass(frozen=True)
class Intrinsics:
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def for_size(cls, width: int, height: int) -> Intrinsics:
        """CLEVR intrinsics scaled to an image of `width` x `height` pixels."""
        sx, sy = width / REFERENCE_WIDTH, height / REFERENCE_HEIGHT
        return cls(REFERENCE_FOCAL * sx, REFERENCE_FOCAL * sy,
                   REFERENCE_WIDTH / 2 * sx, REFERENCE_HEIGHT / 2 * sy)

    def back_project(self, u: np.ndarray, v: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Pixel coordinates plus camera depth -> camera-frame points (N, 3)."""
        return np.stack([(u - self.cx) * z / self.fx, (v - self.cy) * z / self.fy, z], axis=-1)


@dataclass(frozen=True)
class ClevrCamera:
    """World->camera rigid transform plus intrinsics; x right, y down, z forward (depth)."""

    rotation: np.ndarray  # (3, 3)
    translation: np.ndarray  # (3,)
    intrinsics: Intrinsics
    residual: float  # max distance (world units) between fitted and annotated camera points

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        return np.asarray(points, dtype=float) @ self.rotation.T + self.translation

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (N, 3) -> pixel coordinates (N, 2)."""
        cam = self.to_camera(points)
        k = self.intrinsics
        z = np.maximum(cam[:, 2], 1e-6)
        return np.stack([k.fx * cam[:, 0] / z + k.cx, k.fy * cam[:, 1] / z + k.cy], axis=-1)


def kabsch(source: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares rotation R and translation t with target ~= source @ R.T + t."""
    src_mean, tgt_mean = source.mean(axis=0), target.mean(axis=0)
    cov = (source - src_mean).T @ (target - tgt_mean)
    u, _, vt = np.linalg.svd(cov)
    flip = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    rotation = vt.T @ np.diag([1.0, 1.0, flip]) @ u.T
    return rotation, tgt_mean - rotation @ src_mean


def fit_camera(scene: dict[str, Any], width: int, height: int) -> ClevrCamera:
    """Fit the camera of one CLEVR scene; raises CameraFitError when it is underdetermined.

    A made-up scene may state its camera (`"camera": {"rotation", "translation"}`, world->camera):
    then one object, or a row of them, is enough.
    """
    known = scene.get("camera")
    if known is not None:
        return ClevrCamera(np.asarray(known["rotation"], dtype=float), np.asarray(known["translation"], dtype=float),
                           Intrinsics.for_size(width, height), 0.0)
    objects = scene.get("objects") or []
    name = scene.get("image_filename", "scene")
    if len(objects) < MIN_FIT_OBJECTS:
        raise CameraFitError(
            f"{name}: cannot recover the camera from {len(objects)} annotated object(s); "
            f"at least {MIN_FIT_OBJECTS} non-collinear objects are needed"
        )
    world = np.array([o["3d_coords"] for o in objects], dtype=float)
    pix = np.array([o["pixel_coords"] for o in objects], dtype=float)
    # pixel_coords are in the rendered image's own pixels, so only the intrinsics scale.
    intrinsics = Intrinsics.for_size(width, height)
    cam = intrinsics.back_project(pix[:, 0], pix[:, 1], pix[:, 2])
    centred = world - world.mean(axis=0)
    if np.linalg.matrix_rank(centred, tol=1e-3) < 2:
        raise CameraFitError(f"{name}: annotated objects are collinear; the camera is ambiguous")
    rotation, translation = kabsch(world, cam)
    residual = float(np.linalg.norm(world @ rotation.T + translation - cam, axis=1).max())
    if residual > MAX_FIT_RESIDUAL:
        raise CameraFitError(
            f"{name}: annotations do not fit one pinhole camera (residual {residual:.3f} > "
            f"{MAX_FIT_RESIDUAL}); check that pixel_coords belong to this scene"
        )
    return ClevrCamera(rotation, translation, intrinsics, residual)
