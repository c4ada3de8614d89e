"""Render one multi-view scene: K frames of a room, each with its own camera, boxes, masks and
depth, plus one scene-level annotation in world coordinates.

Frame k of scene i is `scene_<i>_f<k>`; its annotation has today's single-image schema, listing
only the objects it shows (ids are the scene's). The scene annotation (`scenes/scene_<i>.json`)
holds the room, every frame's camera and every object's world box, with the frames it appears in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from omni3d_bench.generator.annotate import DECIMALS, _r, object_annotation, scene_annotation
from omni3d_bench.generator.annotate import vocabulary
from omni3d_bench.generator.geometry import amodal_box, box_corners, yaw_matrix
from omni3d_bench.generator.render import Rendering, render
from omni3d_bench.generator.room import sample_room_scene
from omni3d_bench.generator.scene import SceneObject

MIN_FRAME_PIXELS = 30
"""An object is listed in a frame's annotation when it shows at least this many pixels."""
MIN_VISIBLE_PIXELS, MIN_VISIBLE_SHARE = 30, 0.08
"""Every object must show this much of itself in at least one frame, or the scene is redrawn."""
MAX_RENDER_TRIES = 10

Frame = tuple[dict[str, Any], Rendering]


def frame_id(index: int, frame: int) -> str:
    return f"scene_{index:05d}_f{frame:02d}"


def scene_id(index: int) -> str:
    return f"scene_{index:05d}"


def _visible(rendering: Rendering, k: int, box: list[float]) -> tuple[int, bool]:
    pixels = int((rendering.instances == k + 1).sum())
    area = (box[2] - box[0]) * (box[3] - box[1])
    return pixels, pixels >= MIN_VISIBLE_PIXELS and pixels >= MIN_VISIBLE_SHARE * area


def _world_object(k: int, obj: SceneObject, frames: list[int]) -> dict[str, Any]:
    return {
        "id": k, "category_name": obj.category, "color": obj.color, "material": obj.material,
        "dimensions": _r(obj.dims), "center_world": _r(obj.center),
        "yaw_world": round(float(obj.yaw), DECIMALS),
        "bbox3D_world": _r(box_corners(obj.center, obj.dims, yaw_matrix(obj.yaw))),
        "frames": frames, "first_frame": frames[0],
    }


def generate_views_scene(seed: int, index: int, views: int) -> tuple[dict[str, Any], list[Frame]]:
    """Render scene `index` as `views` frames; redraws layouts with an object seen nowhere."""
    rng = np.random.default_rng([seed, index])
    for _ in range(MAX_RENDER_TRIES):
        objects, path, room = sample_room_scene(rng, views)
        renders = [render(objects, cam, seed=index, room=room) for cam in path.cameras]
        seen: list[list[int]] = [[] for _ in objects]
        clear = [False] * len(objects)
        frames: list[Frame] = []
        for f, (camera, rendering) in enumerate(zip(path.cameras, renders)):
            image_id = frame_id(index, f)
            annotation = scene_annotation(image_id, [], camera, rendering, seed)
            for k, obj in enumerate(objects):
                obj.box2d = amodal_box(obj.parts, obj.position, obj.yaw, camera)
                pixels, enough = _visible(rendering, k, obj.box2d)
                clear[k] = clear[k] or enough
                if pixels >= MIN_FRAME_PIXELS:
                    seen[k].append(f)
                    annotation["objects"].append(object_annotation(k, obj, camera, rendering))
            annotation.update(scene_id=scene_id(index), frame=f)
            frames.append((annotation, rendering))
        if all(clear):
            scene = {
                "scene_id": scene_id(index), "seed": seed, "units": "meters",
                "room": {"width": room.width, "length": room.length, "height": room.height,
                         "area": round(room.area, DECIMALS), "center": [0.0, 0.0]},
                "path": {"kind": "orbit arc", "radius": path.radius,
                         "arc_degrees": round(path.arc_degrees, DECIMALS)},
                "frames": [{"frame": f, "image_id": a["image_id"],
                            "image_filename": a["image_filename"], "camera": a["camera"]}
                           for f, (a, _) in enumerate(frames)],
                "vocabulary": vocabulary(),
                "objects": [_world_object(k, o, seen[k]) for k, o in enumerate(objects)],
                "convention": "world z up, floor z = 0, room centred on the origin; camera x "
                              "right, y down, z forward",
            }
            return scene, frames
    raise RuntimeError(f"scene {index}: no layout with every object visible in some frame "
                       f"after {MAX_RENDER_TRIES} tries")
