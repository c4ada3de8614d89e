"""Oracle twins of the region tools, answered from 3D annotations (base_modules.oracle.annotations3d).

A region resolves to the annotated object it shows: by its `object_id` (the annotation's "id")
when the data set gives one, else by its box like any other box. Then:
- distance: between the objects' 3D box centres ("center_world", else "center_cam"), in metres;
- inside: the object's centre, seen from above, lies within the footprint of the area's 3D box
  ("bbox3D_world", world z up), so a floor zone contains what stands on it;
- left/right and leftmost/rightmost/middle: the x-centre of the projected 2D box, as the
  benchmark generator judges left and right;
- closest: the smallest distance from the camera to the object's centre ("center_cam").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from base_modules.module import Depth, ModuleError, RegionDistance, RegionInside, RegionLeft, RegionPick
from base_modules.oracle.annotations3d import Scenes
from base_modules.region_tools import RegionModules, choose
from base_modules.types import Image, Region


class _RegionOracle:
    def __init__(self, scenes: Scenes) -> None:
        super().__init__(device="cpu")  # type: ignore[call-arg]
        self.scenes = scenes

    def index(self, image: Image, region: Region) -> int:
        """Position in the view of the annotated object `region` shows."""
        view = self.scenes.view(image)
        if region.object_id is not None:
            for k, obj in enumerate(view.objects):
                if obj.get("id") == region.object_id:
                    return k
            raise ModuleError(f"image {image.image_id!r} has no annotated object with id {region.object_id}")
        return view.resolve(list(region.box))

    def obj(self, image: Image, region: Region) -> dict[str, Any]:
        return self.scenes.view(image).objects[self.index(image, region)]

    def x_centre(self, image: Image, region: Region) -> float:
        x0, _, x1, _ = self.scenes.view(image).boxes[self.index(image, region)]
        return (x0 + x1) / 2


def _vector(obj: dict[str, Any], *keys: str) -> np.ndarray:
    for key in keys:
        if obj.get(key) is not None:
            return np.asarray(obj[key], dtype=float)
    raise ModuleError(f"the annotation of this object has none of {', '.join(keys)}")


def footprint(corners: np.ndarray) -> np.ndarray:
    """Convex hull (counter-clockwise) of the box corners seen from above (x, y)."""
    points = sorted({(round(float(x), 9), round(float(y), 9)) for x, y in np.asarray(corners)[:, :2]})

    def half(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
        hull: list[tuple[float, float]] = []
        for p in pts:
            while len(hull) >= 2 and _cross(hull[-2], hull[-1], p) <= 0:
                hull.pop()
            hull.append(p)
        return hull

    lower, upper = half(points), half(points[::-1])
    return np.asarray(lower[:-1] + upper[:-1])


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def in_polygon(point: np.ndarray, hull: np.ndarray, eps: float = 1e-9) -> bool:
    """True when `point` lies in (or on) the convex counter-clockwise polygon `hull`."""
    x, y = float(point[0]), float(point[1])
    for k in range(len(hull)):
        a, b = hull[k], hull[(k + 1) % len(hull)]
        if _cross((a[0], a[1]), (b[0], b[1]), (x, y)) < -eps:
            return False
    return len(hull) >= 3


class DistanceOracle(_RegionOracle, RegionDistance):
    def forward(self, image: Image, region_a: Region, region_b: Region) -> float:
        a = _vector(self.obj(image, region_a), "center_world", "center_cam")
        b = _vector(self.obj(image, region_b), "center_world", "center_cam")
        return float(np.linalg.norm(a - b))


class InsideOracle(_RegionOracle, RegionInside):
    def forward(self, image: Image, region: Region, area: Region) -> bool:
        centre = _vector(self.obj(image, region), "center_world")
        corners = _vector(self.obj(image, area), "bbox3D_world")
        return in_polygon(centre[:2], footprint(corners.reshape(-1, 3)))


class LeftOracle(_RegionOracle, RegionLeft):
    def forward(self, image: Image, region_a: Region, region_b: Region) -> bool:
        return self.x_centre(image, region_a) < self.x_centre(image, region_b)


class PickOracle(_RegionOracle, RegionPick):
    def forward(self, image: Image, regions: list[Region], which: str) -> int:
        if which == "closest":
            keys = [math.dist((0.0, 0.0, 0.0), _vector(self.obj(image, r), "center_cam")) for r in regions]
        else:
            keys = [self.x_centre(image, r) for r in regions]
        return choose(keys, which)


def oracle_region_modules(depth: Depth) -> RegionModules | None:
    """Oracle region tools sharing the annotations `depth` reads; None when it reads none."""
    scenes = getattr(depth, "scenes", None)
    if not isinstance(scenes, Scenes):
        return None
    return RegionModules(distance=DistanceOracle(scenes), inside=InsideOracle(scenes),
                         is_left=LeftOracle(scenes), pick_region=PickOracle(scenes))
