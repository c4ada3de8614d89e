"""Random scene layouts: objects from the catalogue on the ground plane, seen by one camera.

Everything is drawn from the `numpy.random.Generator` passed in, so a scene is a pure function
of its seed. Layouts that would leave an object out of frame or mostly hidden are redrawn before
rendering; the renderer's masks make the final visibility check.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from omni3d_bench.generator.catalogue import BY_NAME, CLASSES, COLORS, SIZE_JITTER, Part
from omni3d_bench.generator.geometry import Camera, amodal_box, yaw_matrix

WIDTH, HEIGHT = 480, 320
FOCAL = 460.0
"""Fixed intrinsics (fx = fy, principal point at the centre): about 55 degrees across."""
MIN_OBJECTS, MAX_OBJECTS = 3, 10
LAYOUT_RADIUS = 1.9
"""Object footprints lie within this distance (m) of the scene centre."""
GAP = 0.08
EDGE_MARGIN = 3.0
MAX_HIDDEN = 0.55
"""A layout is redrawn if nearer objects' boxes cover more than this share of an object's box."""
ROUND = frozenset({"ball", "bin", "mug", "stool", "lamp"})


@dataclass
class SceneObject:
    category: str
    color: str
    material: str
    dims: np.ndarray  # width (x), length (y), height (z) in metres, object frame
    position: np.ndarray  # footprint centre on the ground, world
    yaw: float
    parts: list[Part] = field(default_factory=list)
    box2d: list[float] = field(default_factory=list)

    @property
    def center(self) -> np.ndarray:
        return self.position + np.array([0.0, 0.0, self.dims[2] / 2])

    @property
    def footprint_radius(self) -> float:
        return float(np.hypot(self.dims[0], self.dims[1]) / 2)

    def contains(self, points: np.ndarray, eps: float = 0.01) -> np.ndarray:
        """Which world points lie in this object's 3D box (grown by `eps`)."""
        local = (points - self.position) @ yaw_matrix(self.yaw)
        half = self.dims / 2 + eps
        return ((np.abs(local[..., 0]) <= half[0]) & (np.abs(local[..., 1]) <= half[1])
                & (local[..., 2] >= -eps) & (local[..., 2] <= self.dims[2] + eps))


def sample_camera(rng: np.random.Generator) -> Camera:
    distance = rng.uniform(4.0, 5.6)
    elevation = np.radians(rng.uniform(18.0, 34.0))
    azimuth = rng.uniform(0.0, 2 * np.pi)
    target = np.array([*rng.uniform(-0.3, 0.3, 2), 0.35])
    offset = distance * np.array([np.cos(elevation) * np.cos(azimuth),
                                  np.cos(elevation) * np.sin(azimuth), np.sin(elevation)])
    return Camera(WIDTH, HEIGHT, FOCAL, target + offset, target)


def sample_object(rng: np.random.Generator) -> SceneObject:
    cls = CLASSES[rng.integers(len(CLASSES))]
    scale = rng.uniform(1 - SIZE_JITTER, 1 + SIZE_JITTER, 3)
    if cls.name in ROUND:
        scale[1] = scale[0]
    if cls.name == "ball":
        scale[:] = scale[0]
    dims = np.round(np.array(cls.size) * scale, 3)
    colors = sorted(COLORS)
    return SceneObject(
        category=cls.name, color=colors[rng.integers(len(colors))],
        material=cls.materials[rng.integers(len(cls.materials))], dims=dims,
        position=np.zeros(3), yaw=float(rng.uniform(0.0, 2 * np.pi)),
        parts=BY_NAME[cls.name].parts(*dims),
    )


def in_frame(box: list[float], camera: Camera) -> bool:
    return (box[0] >= EDGE_MARGIN and box[1] >= EDGE_MARGIN
            and box[2] <= camera.width - EDGE_MARGIN and box[3] <= camera.height - EDGE_MARGIN)


def _place(obj: SceneObject, placed: list[SceneObject], camera: Camera,
           rng: np.random.Generator, tries: int = 60) -> bool:
    for _ in range(tries):
        r = LAYOUT_RADIUS * np.sqrt(rng.uniform())
        a = rng.uniform(0.0, 2 * np.pi)
        obj.position = np.round(np.array([r * np.cos(a), r * np.sin(a), 0.0]), 4)
        if any(np.linalg.norm(obj.position - o.position) < obj.footprint_radius
               + o.footprint_radius + GAP for o in placed):
            continue
        obj.box2d = amodal_box(obj.parts, obj.position, obj.yaw, camera)
        if in_frame(obj.box2d, camera):
            return True
    return False


def _box_area(b: list[float]) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def mostly_hidden(objects: list[SceneObject], camera: Camera) -> bool:
    depth = [camera.to_camera(o.center[None])[0, 2] for o in objects]
    for i, obj in enumerate(objects):
        covered = 0.0
        for j, other in enumerate(objects):
            if depth[j] < depth[i]:
                a, b = obj.box2d, other.box2d
                covered += _box_area([max(a[0], b[0]), max(a[1], b[1]),
                                      min(a[2], b[2]), min(a[3], b[3])])
        if covered > MAX_HIDDEN * _box_area(obj.box2d):
            return True
    return False


def sample_scene(rng: np.random.Generator, max_tries: int = 50) -> tuple[list[SceneObject], Camera]:
    """Draw a camera and 3-10 objects until every object is in frame and not mostly hidden."""
    for _ in range(max_tries):
        camera = sample_camera(rng)
        wanted = int(rng.integers(MIN_OBJECTS, MAX_OBJECTS + 1))
        objects: list[SceneObject] = []
        for _ in range(wanted):
            obj = sample_object(rng)
            if _place(obj, objects, camera, rng):
                objects.append(obj)
        if len(objects) >= MIN_OBJECTS and not mostly_hidden(objects, camera):
            return objects, camera
    raise RuntimeError("could not draw a valid scene layout; the generator's limits are too tight")
