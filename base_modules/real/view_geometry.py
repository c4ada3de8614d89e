"""Plain-numpy geometry behind the model-backed multi-view modules.

Depth maps and masks of several frames, with each frame's intrinsics and world-to-camera pose,
become world points; points become upright boxes (centre, size, yaw about z) and a room extent;
per-frame detections of one physical object are merged by the distance of their 3D centres.
Conventions are the benchmark's: world z up, floor z = 0, metres; camera x right, y down,
z forward. No weights are involved, so this is tested exactly against the oracle scene graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ANGLE_STEP_DEG = 0.5
"""Resolution of the search for the box orientation that encloses points in the least area."""
MAX_FIT_POINTS = 6000
"""Points used to fit one rectangle (an even subsample); enough for centimetre extents."""


@dataclass(frozen=True)
class CameraView:
    """One frame's camera: 3x3 intrinsics in the frame's pixels and the 4x4 world-to-camera pose."""

    K: np.ndarray
    world_to_camera: np.ndarray

    @property
    def position(self) -> np.ndarray:
        rotation, translation = self.world_to_camera[:3, :3], self.world_to_camera[:3, 3]
        return -rotation.T @ translation


def back_project(depth: np.ndarray, camera: CameraView, region: np.ndarray | None = None,
                 stride: int = 1) -> np.ndarray:
    """World points (N, 3) of the pixels in `region` (all pixels if None) with a valid depth.

    `depth` is camera-frame z in metres per pixel; a pixel is taken at its centre.
    """
    height, width = depth.shape
    valid = np.isfinite(depth) & (depth > 0)
    if region is not None:
        valid &= region
    if stride > 1:
        sparse = np.zeros_like(valid)
        sparse[::stride, ::stride] = True
        valid &= sparse
    v, u = np.nonzero(valid)
    z = depth[v, u].astype(np.float64)
    pixels = np.stack([(u + 0.5) * z, (v + 0.5) * z, z])
    in_camera = np.linalg.solve(camera.K, pixels).T
    rotation, translation = camera.world_to_camera[:3, :3], camera.world_to_camera[:3, 3]
    return (in_camera - translation) @ rotation


def _subsample(points: np.ndarray, limit: int = MAX_FIT_POINTS) -> np.ndarray:
    if len(points) <= limit:
        return points
    return points[np.linspace(0, len(points) - 1, limit).astype(int)]


def ground_rectangle(xy: np.ndarray, trim_percent: float = 0.0) -> tuple[np.ndarray, np.ndarray, float]:
    """(centre (2,), extents (2,), angle) of the least-area rectangle around the points on the
    floor plane; extents[0] lies along (cos angle, sin angle), angle in [0, pi/2).

    `trim_percent` ignores that share of points at each end of each axis (robust to outliers).
    """
    xy = _subsample(np.asarray(xy, dtype=np.float64))
    if len(xy) == 0:
        raise ValueError("no points to fit")
    angles = np.radians(np.arange(0.0, 90.0, ANGLE_STEP_DEG))
    axes = np.stack([np.cos(angles), np.sin(angles)], axis=-1)  # (A, 2)
    along = xy @ axes.T  # (P, A): coordinate along each candidate axis
    across = xy @ np.stack([-axes[:, 1], axes[:, 0]], axis=-1).T
    if trim_percent > 0:
        bounds = [np.percentile(c, [trim_percent, 100.0 - trim_percent], axis=0) for c in (along, across)]
    else:
        bounds = [(c.min(axis=0), c.max(axis=0)) for c in (along, across)]
    extents = np.stack([b[1] - b[0] for b in bounds])  # (2, A)
    best = int(np.argmin(extents[0] * extents[1]))
    middle = np.array([(b[0][best] + b[1][best]) / 2 for b in bounds])
    axis, normal = axes[best], np.array([-axes[best][1], axes[best][0]])
    return middle[0] * axis + middle[1] * normal, extents[:, best], float(angles[best])


def object_box(points: np.ndarray) -> dict:
    """The upright box around an object's world points: {"center", "size": [w, l, h], "yaw"}."""
    centre_xy, (width, length), yaw = ground_rectangle(points[:, :2])
    low, high = float(points[:, 2].min()), float(points[:, 2].max())
    return {"center": [float(centre_xy[0]), float(centre_xy[1]), (low + high) / 2],
            "size": [float(width), float(length), high - low], "yaw": yaw}


@dataclass
class MergedObject:
    """One physical object: the points of every per-frame detection merged into it."""

    points: np.ndarray
    frames: list[int] = field(default_factory=list)
    centre: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.centre = np.asarray(object_box(self.points)["center"])

    def add(self, frame: int, points: np.ndarray) -> None:
        self.points = np.concatenate([self.points, points])
        self.frames.append(frame)
        self.centre = np.asarray(object_box(self.points)["center"])


def merge_detections(detections: list[tuple[int, np.ndarray]], distance: float) -> list[MergedObject]:
    """Group per-frame detections (frame index, world points) into objects, in order of first
    appearance: a detection joins the nearest object whose box centre is within `distance`
    metres of its own (and that no other detection of its frame joined), else starts one."""
    merged: list[MergedObject] = []
    for frame, points in detections:
        if len(points) == 0:
            continue
        centre = np.asarray(object_box(points)["center"])
        near = [(float(np.linalg.norm(o.centre - centre)), i) for i, o in enumerate(merged)
                if frame not in o.frames and np.linalg.norm(o.centre - centre) <= distance]
        if near:
            merged[min(near)[1]].add(frame, points)
        else:
            merged.append(MergedObject(points, [frame]))
    return merged


def room_extent(points: np.ndarray, trim_percent: float = 0.0) -> dict[str, float]:
    """Width and length of the least-area floor rectangle around all points seen (walls bound
    it), and the highest point seen as the height (a lower bound when no ceiling is in view)."""
    _, (a, b), _ = ground_rectangle(points[:, :2], trim_percent)
    height = float(np.percentile(points[:, 2], 100.0 - trim_percent))
    width, length = sorted((float(a), float(b)))
    return {"width": width, "length": length, "height": height}


def upright_alignment(cameras: list[CameraView], points: np.ndarray, floor_percent: float = 1.0) -> np.ndarray:
    """A rigid 4x4 transform taking a reconstruction's frame (any orientation, any origin) to
    the benchmark's: z up, floor at z = 0, x and y along the walls, centred on the room.

    Up is the direction perpendicular to every camera's x axis (a camera held without roll
    keeps its x axis level), signed against the cameras' y axes (image down); the floor is the
    `floor_percent` percentile of the points' heights; the walls are the least-area rectangle.
    """
    rights = np.stack([c.world_to_camera[0, :3] for c in cameras])
    downs = np.stack([c.world_to_camera[1, :3] for c in cameras])
    if len(cameras) < 2 or np.linalg.matrix_rank(rights, tol=1e-3) < 2:
        up = -downs.mean(axis=0)  # one heading only: trust the cameras' own up
    else:
        up = np.linalg.svd(rights)[2][-1]
        if up @ -downs.mean(axis=0) < 0:
            up = -up
    up = up / np.linalg.norm(up)
    seed = rights[0] - (rights[0] @ up) * up
    x_axis = seed / np.linalg.norm(seed)
    rotation = np.stack([x_axis, np.cross(up, x_axis), up])
    upright = points @ rotation.T
    floor = float(np.percentile(upright[:, 2], floor_percent))
    centre, _, angle = ground_rectangle(upright[:, :2])
    c, s = np.cos(angle), np.sin(angle)
    turn = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])  # room walls onto x and y
    transform = np.eye(4)
    transform[:3, :3] = turn @ rotation
    transform[:3, 3] = -turn @ np.array([centre[0], centre[1], floor])
    return transform


def moved(camera: CameraView, world_to_new: np.ndarray, scale: float = 1.0) -> CameraView:
    """The same camera in a new world frame (`world_to_new` rigid) after scaling the old by `scale`."""
    pose = camera.world_to_camera.copy()
    pose[:3, 3] *= scale
    return CameraView(camera.K, pose @ np.linalg.inv(world_to_new))
