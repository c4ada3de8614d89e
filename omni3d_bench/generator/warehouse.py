"""Warehouse scenes: pallets, shelves, boxes and transporters on a floor with marked buffer zones,
seen from a high camera, as the warehouse spatial-intelligence questions picture them.

Buffer zones are flat painted rectangles (a slab `ZONE_THICKNESS` thick) with a known extent;
they come first in the object list, so their ids are 0..Z-1, and they claim only their own slab
when the renderer assigns hit points to instances. Every other object stands on the floor (or on
a zone), footprints apart. Everything is drawn from the seeded generator, so a scene is a pure
function of (seed, index).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from omni3d_bench.generator.annotate import scene_annotation
from omni3d_bench.generator.catalogue import Part
from omni3d_bench.generator.geometry import Camera, amodal_box, yaw_matrix
from omni3d_bench.generator.render import Rendering, render, visible_enough
from omni3d_bench.generator.scene import FOCAL, GAP, HEIGHT, WIDTH, SceneObject, in_frame, mostly_hidden

ZONE = "buffer"
ZONE_THICKNESS = 0.006
ZONE_SIZE = ((2.6, 3.8), (2.2, 3.0))
"""Width and length ranges (m) of a buffer zone."""
ZONES = (1, 2)
LAYOUT_RADIUS = 3.4
ZONE_RADIUS = 2.6
"""Object footprints lie within LAYOUT_RADIUS (m) of the scene centre, zone centres within ZONE_RADIUS."""
IN_ZONE_SHARE = 0.6
"""Chance that a pallet, box or transporter is placed inside a zone rather than anywhere."""
SIZE_JITTER = 0.10
CAMERA_DISTANCE = (8.5, 10.5)
CAMERA_ELEVATION = (32.0, 48.0)
MAX_RENDER_TRIES = 10


def _box(cx: float, cy: float, z0: float, z1: float, hx: float, hy: float) -> Part:
    return ("box", (cx, cy, (z0 + z1) / 2), (hx, hy, (z1 - z0) / 2))


def _pallet(w: float, length: float, h: float) -> list[Part]:
    deck = 0.03
    return [_box(0.0, 0.0, h - deck, h, w / 2, length / 2),
            *(_box(0.0, y, 0.0, h - deck, w / 2, 0.05) for y in (-length / 2 + 0.05, 0.0, length / 2 - 0.05))]


def _shelf(w: float, length: float, h: float) -> list[Part]:
    post = 0.03
    posts = [_box(sx * (w / 2 - post), sy * (length / 2 - post), 0.0, h, post, post)
             for sx in (-1, 1) for sy in (-1, 1)]
    boards = [_box(0.0, 0.0, z0, z0 + 0.04, w / 2, length / 2) for z0 in (0.15, h / 2 - 0.02, h - 0.04)]
    return posts + boards


def _carton(w: float, length: float, h: float) -> list[Part]:
    return [_box(0.0, 0.0, 0.0, h, w / 2, length / 2)]


def _transporter(w: float, length: float, h: float) -> list[Part]:
    base = 0.35
    return [_box(0.0, 0.0, 0.0, base, w / 2, length / 2), _box(0.0, length / 2 - 0.1, base, h, w / 2, 0.1)]


def _zone(w: float, length: float, h: float) -> list[Part]:
    return [_box(0.0, 0.0, 0.0, h, w / 2, length / 2)]


@dataclass(frozen=True)
class WarehouseClass:
    name: str
    size: tuple[float, float, float]  # nominal width (x), length (y), height (z), metres
    color: str
    material: str
    count: tuple[int, int]  # instances per scene, inclusive
    synonyms: tuple[str, ...] = ()


CLASSES: tuple[WarehouseClass, ...] = (
    WarehouseClass("pallet", (1.2, 1.0, 0.144), "brown", "wood", (3, 7)),
    WarehouseClass("shelf", (1.8, 0.6, 2.0), "blue", "metal", (0, 2), ("rack",)),
    WarehouseClass("box", (0.6, 0.4, 0.4), "orange", "cardboard", (1, 4), ("crate", "carton")),
    WarehouseClass("transporter", (0.8, 1.4, 1.2), "red", "metal", (0, 2), ("forklift", "cart")),
)
"""The object classes in drawing order; each has its own colour so classes read apart."""
BUILDERS = {"pallet": _pallet, "shelf": _shelf, "box": _carton, "transporter": _transporter}
PLURALS = {"pallet": "pallets", "shelf": "shelves", "box": "boxes", "transporter": "transporters",
           ZONE: "buffer regions"}
ZONE_COLOR, ZONE_MATERIAL = "yellow", "paint"


def vocabulary() -> dict[str, dict[str, list[str]]]:
    """The warehouse words the oracle modules understand."""
    return {"category": {**{c.name: list(c.synonyms) for c in CLASSES},
                         ZONE: ["buffer zone", "buffer region", "buffer area"]},
            "color": {c: [] for c in sorted({c.color for c in CLASSES} | {ZONE_COLOR})},
            "material": {m: [] for m in sorted({c.material for c in CLASSES} | {ZONE_MATERIAL})}}


class FloorZone(SceneObject):
    """A buffer zone. It claims only hit points on its own slab (1 mm of slack around its edges,
    none above), so the objects standing on it, assigned after it, keep every pixel of theirs."""

    def contains(self, points: np.ndarray, eps: float = 1e-3) -> np.ndarray:
        local = (points - self.position) @ yaw_matrix(self.yaw)
        half = self.dims / 2 + eps
        return ((np.abs(local[..., 0]) <= half[0]) & (np.abs(local[..., 1]) <= half[1])
                & (local[..., 2] <= self.dims[2] + 1e-4))


def sample_camera(rng: np.random.Generator) -> Camera:
    """A high camera (about 5-8 m up) looking down at the layout, as warehouse cameras do."""
    distance = rng.uniform(*CAMERA_DISTANCE)
    elevation = np.radians(rng.uniform(*CAMERA_ELEVATION))
    azimuth = rng.uniform(0.0, 2 * np.pi)
    target = np.array([*rng.uniform(-0.4, 0.4, 2), 0.0])
    offset = distance * np.array([np.cos(elevation) * np.cos(azimuth),
                                  np.cos(elevation) * np.sin(azimuth), np.sin(elevation)])
    return Camera(WIDTH, HEIGHT, FOCAL, target + offset, target)


def _disc_point(rng: np.random.Generator, radius: float) -> np.ndarray:
    r, a = radius * np.sqrt(rng.uniform()), rng.uniform(0.0, 2 * np.pi)
    return np.round(np.array([r * np.cos(a), r * np.sin(a), 0.0]), 4)


def _zones(rng: np.random.Generator, camera: Camera, tries: int = 40) -> list[SceneObject]:
    zones: list[SceneObject] = []
    for _ in range(int(rng.integers(ZONES[0], ZONES[1] + 1))):
        dims = np.round(np.array([rng.uniform(*ZONE_SIZE[0]), rng.uniform(*ZONE_SIZE[1]),
                                  ZONE_THICKNESS]), 3)
        zone = FloorZone(ZONE, ZONE_COLOR, ZONE_MATERIAL, dims, np.zeros(3),
                         float(rng.uniform(0.0, np.pi)), _zone(*dims))
        for _ in range(tries):
            zone.position = _disc_point(rng, ZONE_RADIUS)
            zone.box2d = amodal_box(zone.parts, zone.position, zone.yaw, camera)
            if in_frame(zone.box2d, camera) and all(
                    np.linalg.norm(zone.position - z.position) >= zone.footprint_radius
                    + z.footprint_radius + GAP for z in zones):
                zones.append(zone)
                break
    return zones


def _object(rng: np.random.Generator, cls: WarehouseClass) -> SceneObject:
    dims = np.round(np.array(cls.size) * rng.uniform(1 - SIZE_JITTER, 1 + SIZE_JITTER, 3), 3)
    return SceneObject(cls.name, cls.color, cls.material, dims, np.zeros(3),
                       float(rng.uniform(0.0, 2 * np.pi)), BUILDERS[cls.name](*dims))


def _position(rng: np.random.Generator, obj: SceneObject, zones: list[SceneObject]) -> np.ndarray:
    if obj.category != "shelf" and zones and rng.uniform() < IN_ZONE_SHARE:
        zone = zones[int(rng.integers(len(zones)))]
        local = rng.uniform(-1.0, 1.0, 2) * np.maximum(zone.dims[:2] / 2 - 0.3, 0.05)
        return np.round(np.array([*(yaw_matrix(zone.yaw)[:2, :2] @ local + zone.position[:2]), 0.0]), 4)
    return _disc_point(rng, LAYOUT_RADIUS)


def _objects(rng: np.random.Generator, camera: Camera, zones: list[SceneObject],
             tries: int = 60) -> list[SceneObject]:
    placed: list[SceneObject] = []
    for cls in CLASSES:
        for _ in range(int(rng.integers(cls.count[0], cls.count[1] + 1))):
            obj = _object(rng, cls)
            for _ in range(tries):
                obj.position = _position(rng, obj, zones)
                if any(np.linalg.norm(obj.position - o.position) < obj.footprint_radius
                       + o.footprint_radius + GAP for o in placed):
                    continue
                obj.box2d = amodal_box(obj.parts, obj.position, obj.yaw, camera)
                if in_frame(obj.box2d, camera):
                    placed.append(obj)
                    break
    return placed


def sample_warehouse(rng: np.random.Generator, max_tries: int = 50) -> tuple[list[SceneObject], Camera]:
    """Zones first, then objects, until at least three pallets are in frame and none is mostly
    hidden behind nearer objects (zones lie on the floor and hide nothing)."""
    for _ in range(max_tries):
        camera = sample_camera(rng)
        zones = _zones(rng, camera)
        objects = _objects(rng, camera, zones)
        if zones and sum(o.category == "pallet" for o in objects) >= 3 \
                and not mostly_hidden(objects, camera):
            return zones + objects, camera
    raise RuntimeError("could not draw a valid warehouse layout; the generator's limits are too tight")


def generate_warehouse_scene(seed: int, index: int, image_id: str) -> tuple[dict[str, Any], Rendering]:
    """Render warehouse scene `index` of the benchmark with `seed`; redraws hidden layouts."""
    rng = np.random.default_rng([seed, index, 2])
    for _ in range(MAX_RENDER_TRIES):
        objects, camera = sample_warehouse(rng)
        rendering = render(objects, camera, seed=index)
        if visible_enough(rendering, [o.box2d for o in objects]):
            annotation = scene_annotation(image_id, objects, camera, rendering, seed, vocabulary())
            annotation["kind"] = "warehouse"
            return annotation, rendering
    raise RuntimeError(f"warehouse scene {index}: no layout with every object visible after "
                       f"{MAX_RENDER_TRIES} tries")
