"""Multi-view scenes: objects in a walled room, seen by a camera moving along an orbit arc.

A room is centred on the world origin with known floor extent and wall height, so room-size
questions have an exact answer. The camera circles the layout inside the room, looking at its
centre, as a handheld video walking around the objects would. Everything is drawn from the
`numpy.random.Generator` passed in, so a scene is a pure function of its seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from omni3d_bench.generator.geometry import Camera
from omni3d_bench.generator.scene import (
    FOCAL,
    GAP,
    HEIGHT,
    MAX_OBJECTS,
    MIN_OBJECTS,
    WIDTH,
    SceneObject,
    sample_object,
)

LAYOUT_RADIUS = 1.6
"""Object footprints lie within this distance (m) of the room centre."""
ORBIT_RADIUS = (2.6, 3.2)
CAMERA_HEIGHT = (1.3, 1.7)
ARC_DEGREES = (150.0, 270.0)
"""How far around the layout the camera travels between the first and the last frame."""
LOOK_DISTANCE, LOOK_TURN = 1.2, 1.2
"""The camera looks at a point LOOK_DISTANCE (m) from the centre, LOOK_TURN radians around from
the far side, so each frame sees part of the layout and objects enter as it moves."""
LOOK_HEIGHT = 0.4
WALL_CLEARANCE = (0.4, 1.4)
"""Distance (m) from the farthest point of the camera orbit to each wall."""
ROOM_HEIGHT = (2.5, 3.0)


@dataclass(frozen=True)
class Room:
    """Floor `width` (along world x) by `length` (along y), walls `height` high, in metres."""

    width: float
    length: float
    height: float

    @property
    def area(self) -> float:
        return self.width * self.length


@dataclass(frozen=True)
class CameraPath:
    """The cameras of the frames, in order, and the orbit they lie on."""

    cameras: list[Camera]
    radius: float
    arc_degrees: float


def sample_path(rng: np.random.Generator, views: int) -> CameraPath:
    """`views` cameras evenly spaced along an arc around the centre, looking inwards and aside."""
    radius = round(float(rng.uniform(*ORBIT_RADIUS)), 3)
    height = float(rng.uniform(*CAMERA_HEIGHT))
    start = float(rng.uniform(0.0, 2 * np.pi))
    arc = float(rng.uniform(*ARC_DEGREES))
    cameras = []
    for k in range(views):
        angle = start + np.radians(arc) * (k / max(views - 1, 1))
        position = np.array([radius * np.cos(angle), radius * np.sin(angle), height])
        look = angle + np.pi + LOOK_TURN
        target = np.array([LOOK_DISTANCE * np.cos(look), LOOK_DISTANCE * np.sin(look), LOOK_HEIGHT])
        cameras.append(Camera(WIDTH, HEIGHT, FOCAL, position, target))
    return CameraPath(cameras, radius, arc)


def sample_room(rng: np.random.Generator, orbit_radius: float) -> Room:
    """Walls clear of the whole orbit on every side."""
    half = orbit_radius + rng.uniform(*WALL_CLEARANCE, 2)
    return Room(round(float(2 * half[0]), 2), round(float(2 * half[1]), 2),
                round(float(rng.uniform(*ROOM_HEIGHT)), 2))


def place_objects(rng: np.random.Generator, wanted: int, tries: int = 60) -> list[SceneObject]:
    """Up to `wanted` objects on the floor around the centre, footprints apart by `GAP`."""
    placed: list[SceneObject] = []
    for _ in range(wanted):
        obj = sample_object(rng)
        for _ in range(tries):
            r = LAYOUT_RADIUS * np.sqrt(rng.uniform())
            a = rng.uniform(0.0, 2 * np.pi)
            obj.position = np.round(np.array([r * np.cos(a), r * np.sin(a), 0.0]), 4)
            if all(np.linalg.norm(obj.position - o.position) >= obj.footprint_radius
                   + o.footprint_radius + GAP for o in placed):
                placed.append(obj)
                break
    return placed


def sample_room_scene(rng: np.random.Generator, views: int,
                      ) -> tuple[list[SceneObject], CameraPath, Room]:
    """A room, a camera path of `views` frames and 3-10 objects (the renderer checks visibility)."""
    path = sample_path(rng, views)
    room = sample_room(rng, path.radius)
    while True:
        objects = place_objects(rng, int(rng.integers(MIN_OBJECTS, MAX_OBJECTS + 1)))
        if len(objects) >= MIN_OBJECTS:
            return objects, path, room
