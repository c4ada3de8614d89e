"""Headless rendering with Mitsuba 3 (pure CPU, `scalar_rgb`): RGB, depth and instance masks.

Two passes over the same scene: a direct-lighting pass for the picture (three directional
lights, so there is no environment-sampling noise) and a one-sample AOV pass that returns each
pixel's world hit point. Depth is that point's camera-frame z; the instance mask assigns a hit
point to the object whose 3D box contains it, which is exact because boxes never overlap and
the floor (z = 0) is told apart by height.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from omni3d_bench.generator.catalogue import COLORS, Part
from omni3d_bench.generator.geometry import Camera, yaw_matrix
from omni3d_bench.generator.room import Room
from omni3d_bench.generator.scene import SceneObject

SAMPLES_PER_PIXEL = 4
MIN_VISIBLE_PIXELS = 30
MIN_VISIBLE_SHARE = 0.08
"""An object must show this many pixels, and this share of its 2D box, or the scene is redrawn."""
WALL_THICKNESS = 0.05
FLOOR_EPS = 1e-3
LIGHTS = (((-0.35, 0.45, -1.0), 1.0), ((0.6, -0.2, -0.5), 0.45))
"""(direction, irradiance) of the key and fill lights."""


class RendererUnavailable(RuntimeError):
    """Mitsuba 3 is not installed; `pip install 'vadar[bench]'` provides it."""


def _mitsuba() -> Any:
    try:
        import mitsuba as mi  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise RendererUnavailable(
            "rendering the benchmark needs Mitsuba 3: pip install 'vadar[bench]' (or mitsuba)"
        ) from exc
    if mi.variant() != "scalar_rgb":
        mi.set_variant("scalar_rgb")
    return mi


@dataclass(frozen=True)
class Rendering:
    rgb: np.ndarray  # (H, W, 3) uint8, sRGB
    depth: np.ndarray  # (H, W) float32 camera-frame z in metres, 0 where nothing was hit
    instances: np.ndarray  # (H, W) uint8, 0 = floor/sky, i + 1 = object i


def visible_enough(rendering: Rendering, boxes: list[list[float]]) -> bool:
    """Whether object k (mask value k + 1) shows enough of itself for each 2D box `boxes[k]`."""
    for k, box in enumerate(boxes):
        pixels = int((rendering.instances == k + 1).sum())
        area = (box[2] - box[0]) * (box[3] - box[1])
        if pixels < MIN_VISIBLE_PIXELS or pixels < MIN_VISIBLE_SHARE * area:
            return False
    return True


def _bsdf(color: str, material: str) -> dict[str, Any]:
    rgb = {"type": "rgb", "value": list(COLORS[color])}
    if material == "metal":
        return {"type": "blendbsdf", "weight": 0.5,
                "bsdf_0": {"type": "diffuse", "reflectance": rgb},
                "bsdf_1": {"type": "roughconductor", "alpha": 0.2, "specular_reflectance": rgb}}
    if material == "plastic":
        return {"type": "roughplastic", "alpha": 0.12, "diffuse_reflectance": rgb}
    return {"type": "diffuse", "reflectance": rgb}


def _part_shapes(part: Part, position: np.ndarray, yaw: float, bsdf: dict, mi: Any) -> list[dict]:
    T = mi.ScalarTransform4f
    rot = yaw_matrix(yaw)
    kind = part[0]
    if kind == "box":
        centre = rot @ np.array(part[1]) + position
        return [{"type": "cube", "bsdf": bsdf, "to_world": T().translate(centre.tolist())
                 .rotate([0, 0, 1], float(np.degrees(yaw))).scale(list(part[2]))}]
    if kind == "cylinder":
        (cx, cy), z0, z1, r = part[1:]
        base = rot @ np.array([cx, cy, 0.0]) + position
        return [{"type": "cylinder", "bsdf": bsdf, "radius": r,
                 "p0": [base[0], base[1], z0], "p1": [base[0], base[1], z1]},
                {"type": "disk", "bsdf": bsdf,
                 "to_world": T().translate([base[0], base[1], z1]).scale([r, r, 1.0])}]
    centre = rot @ np.array(part[1]) + position
    return [{"type": "sphere", "bsdf": bsdf, "center": centre.tolist(), "radius": part[2]}]


def room_shapes(room: Room, mi: Any) -> dict[str, dict]:
    """The floor and four walls of `room` (centred on the world origin) as thin boxes."""
    T = mi.ScalarTransform4f
    wall = {"type": "diffuse", "reflectance": {"type": "rgb", "value": 0.62}}
    hx, hy, h, t = room.width / 2, room.length / 2, room.height, WALL_THICKNESS
    shapes = {"floor": {"type": "rectangle", "to_world": T().scale([hx, hy, 1.0]),
                        "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": 0.38}}}}
    for name, centre, half in (("wall_east", [hx + t, 0, h / 2], [t, hy + 2 * t, h / 2]),
                               ("wall_west", [-hx - t, 0, h / 2], [t, hy + 2 * t, h / 2]),
                               ("wall_north", [0, hy + t, h / 2], [hx + 2 * t, t, h / 2]),
                               ("wall_south", [0, -hy - t, h / 2], [hx + 2 * t, t, h / 2])):
        shapes[name] = {"type": "cube", "bsdf": wall,
                        "to_world": T().translate(centre).scale(half)}
    return shapes


def scene_dict(objects: list[SceneObject], camera: Camera, spp: int, seed: int,
               integrator: dict[str, Any], mi: Any, room: Room | None = None) -> dict[str, Any]:
    T = mi.ScalarTransform4f
    scene: dict[str, Any] = {
        "type": "scene",
        "integrator": integrator,
        "sensor": {
            "type": "perspective", "fov": camera.fov_x_degrees, "fov_axis": "x",
            "to_world": T().look_at(origin=camera.position.tolist(),
                                    target=camera.target.tolist(), up=[0, 0, 1]),
            "film": {"type": "hdrfilm", "width": camera.width, "height": camera.height,
                     "rfilter": {"type": "box"}, "pixel_format": "rgb"},
            "sampler": {"type": "ldsampler" if spp > 1 else "independent",
                        "sample_count": spp, "seed": seed},
        },
        "floor": {"type": "rectangle", "to_world": T().scale([30.0, 30.0, 1.0]),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": 0.38}}},
    }
    if room is not None:
        del scene["floor"]
        scene.update(room_shapes(room, mi))
    for k, (direction, power) in enumerate(LIGHTS):
        scene[f"light_{k}"] = {"type": "directional", "direction": list(direction),
                               "irradiance": {"type": "rgb", "value": power}}
    for i, obj in enumerate(objects):
        bsdf = _bsdf(obj.color, obj.material)
        for j, part in enumerate(obj.parts):
            for k, shape in enumerate(_part_shapes(part, obj.position, obj.yaw, bsdf, mi)):
                scene[f"object_{i:02d}_{j:02d}_{k}"] = shape
    return scene


def render(objects: list[SceneObject], camera: Camera, seed: int = 0,
           spp: int = SAMPLES_PER_PIXEL, room: Room | None = None) -> Rendering:
    """Render the picture, the depth map and the instance masks of one scene (in `room` if
    given, else on an open ground plane)."""
    mi = _mitsuba()
    direct = {"type": "direct", "emitter_samples": 4, "bsdf_samples": 0}
    picture = mi.render(mi.load_dict(scene_dict(objects, camera, spp, seed, direct, mi, room)))
    bitmap = mi.Bitmap(picture).convert(mi.Bitmap.PixelFormat.RGB,
                                        mi.Struct.Type.UInt8, srgb_gamma=True)
    rgb = np.array(bitmap, dtype=np.uint8).reshape(camera.height, camera.width, 3)
    aov = {"type": "aov", "aovs": "dd:depth,pos:position"}
    hits = np.array(mi.render(mi.load_dict(scene_dict(objects, camera, 1, seed, aov, mi, room))))
    hit = hits[..., 0] > 0
    points = hits[..., 1:4].astype(np.float64)
    depth = np.where(hit, camera.to_camera(points.reshape(-1, 3))[:, 2]
                     .reshape(hit.shape), 0.0).astype(np.float32)
    instances = np.zeros(hit.shape, np.uint8)
    solid = hit & (points[..., 2] > FLOOR_EPS)
    for i, obj in enumerate(objects):
        instances[solid & obj.contains(points) & (instances == 0)] = i + 1
    return Rendering(rgb, depth, instances)
