"""Camera and object geometry: the single source of every projected or 3D quantity.

Conventions: world frame z up, ground plane z = 0, metres. Camera frame as in OpenCV and
Omni3D: x right, y down, z forward (depth). `world_to_camera` maps world points to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from omni3d_bench.generator.catalogue import Part

RING = 48
"""Points per circle when sampling round silhouettes; boxes are within ~0.1 px of exact."""


@dataclass(frozen=True)
class Camera:
    width: int
    height: int
    fx: float
    position: np.ndarray  # world (3,)
    target: np.ndarray  # world (3,)

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.width / 2], [0.0, self.fx, self.height / 2],
                         [0.0, 0.0, 1.0]])

    @property
    def rotation(self) -> np.ndarray:
        """World->camera rotation; rows are the camera's right, down and forward axes."""
        forward = self.target - self.position
        forward = forward / np.linalg.norm(forward)
        right = np.cross(forward, [0.0, 0.0, 1.0])
        right /= np.linalg.norm(right)
        return np.stack([right, np.cross(forward, right), forward])

    @property
    def world_to_camera(self) -> np.ndarray:
        m = np.eye(4)
        m[:3, :3] = self.rotation
        m[:3, 3] = -self.rotation @ self.position
        return m

    @property
    def fov_x_degrees(self) -> float:
        return float(np.degrees(2 * np.arctan(self.width / 2 / self.fx)))

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        return (np.asarray(points, float) - self.position) @ self.rotation.T

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (N, 3) -> pixel coordinates (N, 2); pixel i spans [i, i + 1)."""
        cam = self.to_camera(points)
        z = np.maximum(cam[:, 2], 1e-6)
        return np.stack([self.fx * cam[:, 0] / z + self.width / 2,
                         self.fx * cam[:, 1] / z + self.height / 2], axis=-1)


def yaw_matrix(yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def box_corners(center: np.ndarray, dims: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """The 8 corners (8, 3) of a box with `dims` (full sizes) along the columns of `rotation`."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return np.asarray(center, float) + (signs * np.asarray(dims, float) / 2) @ rotation.T


def _circle(n: int = RING) -> np.ndarray:
    a = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    return np.stack([np.cos(a), np.sin(a)], axis=-1)


def part_points(part: Part) -> np.ndarray:
    """Points of a part (object frame) whose projections bound its silhouette."""
    kind = part[0]
    if kind == "box":
        return box_corners(np.array(part[1]), 2 * np.array(part[2]), np.eye(3))
    if kind == "cylinder":
        (cx, cy), z0, z1, r = part[1:]
        ring = r * _circle() + [cx, cy]
        return np.concatenate([np.column_stack([ring, np.full(len(ring), z)]) for z in (z0, z1)])
    if kind == "sphere":
        centre, r = np.array(part[1]), part[2]
        lats = np.linspace(-np.pi / 2, np.pi / 2, RING // 2 + 1)
        rings = [np.column_stack([np.cos(a) * _circle(), np.full(RING, np.sin(a))]) for a in lats]
        return centre + r * np.concatenate(rings)
    raise ValueError(f"unknown part kind {kind!r}")


def to_world(points: np.ndarray, position: np.ndarray, yaw: float) -> np.ndarray:
    """Object-frame points -> world: rotate about z by `yaw`, then move to `position`."""
    return np.asarray(points, float) @ yaw_matrix(yaw).T + position


def amodal_box(parts: list[Part], position: np.ndarray, yaw: float, camera: Camera) -> list[float]:
    """The 2D box of the object's whole projected silhouette (hidden parts included), clipped."""
    pts = np.concatenate([part_points(p) for p in parts])
    uv = camera.project(to_world(pts, position, yaw))
    x0, y0 = uv.min(axis=0)
    x1, y1 = uv.max(axis=0)
    return [float(np.clip(x0, 0, camera.width)), float(np.clip(y0, 0, camera.height)),
            float(np.clip(x1, 0, camera.width)), float(np.clip(y1, 0, camera.height))]
