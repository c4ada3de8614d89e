"""The 3D extent of CLEVR objects and their projected 2D boxes.

CLEVR conventions (checked against the rendered images): an object rests on the ground plane
with its centre at `3d_coords`, and `3d_coords[2]` is its half-size (0.7 large, 0.35 small).
A cube is an axis-aligned cube of that half-size rotated about the vertical axis by `rotation`,
which the renderer feeds to Blender as radians although it was drawn in [0, 360); a sphere has
that radius; a cylinder has that radius and half-height. The box of an object is the min/max of
its projected silhouette points, so it covers the whole object including hidden parts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from base_modules.oracle.clevr_camera import ClevrCamera
from base_modules.types import BBox

CIRCLE_SAMPLES = 72
SPHERE_SAMPLES = 24
"""Sampling density; the boxes of sampled silhouettes are within ~0.1 px of the exact ones."""


def _unit_circle(n: int) -> np.ndarray:
    angles = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    return np.stack([np.cos(angles), np.sin(angles)], axis=-1)


def _sphere_points(radius: float) -> np.ndarray:
    """Points on latitude circles; includes the poles and the equator."""
    lat = np.linspace(-np.pi / 2, np.pi / 2, SPHERE_SAMPLES + 1)
    ring = _unit_circle(CIRCLE_SAMPLES)
    pts = [
        np.column_stack([np.cos(a) * ring, np.full(len(ring), np.sin(a))]) for a in lat
    ]
    return radius * np.concatenate(pts)


def _cylinder_points(radius: float, half_height: float) -> np.ndarray:
    """The two rim circles; a cylinder's projected extremes always lie on them."""
    ring = radius * _unit_circle(CIRCLE_SAMPLES)
    return np.concatenate([
        np.column_stack([ring, np.full(len(ring), z)]) for z in (-half_height, half_height)
    ])


def _cube_points(half: float, rotation: float) -> np.ndarray:
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    c, s = np.cos(rotation), np.sin(rotation)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return half * corners @ rot.T


def object_points(obj: dict[str, Any]) -> np.ndarray:
    """World-frame points whose projections bound the object's silhouette."""
    centre = np.asarray(obj["3d_coords"], dtype=float)
    half = float(centre[2])
    shape = obj.get("shape")
    if shape == "cube":
        local = _cube_points(half, float(obj.get("rotation", 0.0)))
    elif shape == "cylinder":
        local = _cylinder_points(half, half)
    elif shape == "sphere":
        local = _sphere_points(half)
    else:
        raise ValueError(f"unknown CLEVR shape {shape!r}; expected cube, sphere or cylinder")
    return centre + local


def object_box(obj: dict[str, Any], camera: ClevrCamera, width: int, height: int) -> BBox:
    """The object's projected 2D box [x_min, y_min, x_max, y_max], clipped to the image."""
    uv = camera.project(object_points(obj))
    x0, y0 = uv.min(axis=0)
    x1, y1 = uv.max(axis=0)
    return [
        float(np.clip(x0, 0, width)), float(np.clip(y0, 0, height)),
        float(np.clip(x1, 0, width)), float(np.clip(y1, 0, height)),
    ]
