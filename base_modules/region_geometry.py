"""Geometric twins of the region tools: answers from masks, boxes and a depth module.

A region's point is its mask centroid (its box centre without a mask), lifted to 3D with the
depth of its box (from any depth backend) and the camera's focal length, with the principal point
at the image centre. Inclusion is judged in the image: an object is inside a floor region when
the bottom centre of its box lies on the region's mask. `region_modules(modules)` picks the
oracle twins instead when the depth module reads 3D annotations.
"""

from __future__ import annotations

import math

from base_modules.module import Depth, ModuleError, ModuleSet, RegionDistance, RegionInside, RegionLeft, RegionPick
from base_modules.oracle.regions3d import oracle_region_modules
from base_modules.region_tools import RegionModules, choose, region_mask, region_point
from base_modules.types import Image, Region


class _Geometric:
    def __init__(self, depth: Depth) -> None:
        super().__init__(device="cpu")  # type: ignore[call-arg]
        self.depth_module = depth

    def range_of(self, image: Image, region: Region) -> float:
        """Distance from the camera to the region's point; the depth itself without a focal length."""
        x, y, z = self.point(image, region, need_focal=False)
        return math.sqrt(x * x + y * y + z * z)

    def point(self, image: Image, region: Region, *, need_focal: bool = True) -> tuple[float, float, float]:
        """The region's point in camera coordinates (metres): x right, y down, z forward."""
        z = float(self.depth_module(image, list(region.box)))
        if image.focal_length is None:
            if need_focal:
                raise ModuleError(f"image {image.image_id!r} has no known focal length, so 3D "
                                  "distances cannot be measured")
            return (0.0, 0.0, z)
        u, v = region_point(region)
        f = float(image.focal_length)
        return ((u - image.width / 2) * z / f, (v - image.height / 2) * z / f, z)


class GeometricDistance(_Geometric, RegionDistance):
    def forward(self, image: Image, region_a: Region, region_b: Region) -> float:
        a, b = self.point(image, region_a), self.point(image, region_b)
        return float(math.dist(a, b))


class GeometricInside(_Geometric, RegionInside):
    def forward(self, image: Image, region: Region, area: Region) -> bool:
        """The object's foot (bottom centre of its box) lies on the area's mask (or in its box)."""
        x = region_point(region)[0]
        y = region.box[3] - 0.5
        mask = region_mask(area)
        if mask is not None:
            col, row = int(math.floor(x)), int(math.floor(y))
            return bool(0 <= row < mask.shape[0] and 0 <= col < mask.shape[1] and mask[row, col])
        x0, y0, x1, y1 = area.box
        return bool(x0 <= x <= x1 and y0 <= y <= y1)


class GeometricLeft(_Geometric, RegionLeft):
    def forward(self, image: Image, region_a: Region, region_b: Region) -> bool:
        return region_point(region_a)[0] < region_point(region_b)[0]


class GeometricPick(_Geometric, RegionPick):
    def forward(self, image: Image, regions: list[Region], which: str) -> int:
        if which == "closest":
            return choose([self.range_of(image, r) for r in regions], which)
        return choose([region_point(r)[0] for r in regions], which)


def geometric_region_modules(depth: Depth) -> RegionModules:
    """Region tools from masks, boxes and `depth` (model-backed or oracle)."""
    return RegionModules(distance=GeometricDistance(depth), inside=GeometricInside(depth),
                         is_left=GeometricLeft(depth), pick_region=GeometricPick(depth))


def region_modules(modules: ModuleSet) -> RegionModules:
    """The region tools that go with `modules`: oracle twins when its depth reads 3D annotations."""
    oracle = oracle_region_modules(modules.depth)
    return oracle if oracle is not None else geometric_region_modules(modules.depth)
