"""The multi-view modules answered from ground truth: a 3D scene graph in world coordinates.

Reads two annotations: each frame's own (the single-image schema of the built-in benchmark,
listing the objects that frame shows, with scene-wide ids and its `scene_id`), found by
`frame_lookup(image_id)`, and the scene's world annotation (room, cameras, objects' world boxes),
found by `world_lookup(scene_id)`. Boxes resolve to objects by IoU, as in the other oracles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from base_modules.module import ModuleError
from base_modules.oracle.annotations3d import SceneLookup, Scenes
from base_modules.oracle.annotations3d_vocab import FILLER, matches
from base_modules.types import BBox, Image
from base_modules.view_modules import (
    CameraPose,
    Objects3D,
    RoomLayout,
    SameObjectAcross,
    ViewModuleSet,
)

WorldLookup = Callable[[str], "dict[str, Any] | None"]


class SceneGraph:
    """Frames and world annotations of multi-view scenes, looked up by id."""

    def __init__(self, frame_lookup: SceneLookup, world_lookup: WorldLookup) -> None:
        self._frames = frame_lookup
        self._world = world_lookup
        self.scenes = Scenes(frame_lookup)

    def frame(self, view: Image) -> dict[str, Any]:
        if not isinstance(view, Image):
            raise ModuleError(f"expected one frame from `views` (an Image), got {type(view).__name__}")
        frame = self._frames(view.image_id)
        if frame is None:
            raise ModuleError(f"no annotation for frame {view.image_id!r}")
        return frame

    def world(self, views: list[Image]) -> dict[str, Any]:
        """The world annotation of the one scene that all of `views` belong to."""
        if isinstance(views, Image):
            views = [views]
        if not isinstance(views, (list, tuple)) or not views:
            raise ModuleError("views must be a non-empty list of frames (pass `views`)")
        ids = {self.frame(v).get("scene_id") for v in views}
        if len(ids) != 1 or None in ids:
            raise ModuleError("the frames must all show one multi-view scene; got frames of "
                              f"{sorted(map(str, ids))}")
        world = self._world(ids.pop())
        if world is None:
            raise ModuleError("this scene has no world annotation (scenes/<scene_id>.json)")
        return world

    def object_id(self, view: Image, bbox: BBox) -> tuple[str, int]:
        """(scene id, object id) of the object `bbox` shows in `view`."""
        frame = self.frame(view)
        scene_view = self.scenes.view(view)
        return str(frame.get("scene_id")), int(scene_view.objects[scene_view.resolve(bbox)]["id"])


class _Oracle:
    def __init__(self, graph: SceneGraph) -> None:
        super().__init__(device="cpu")  # type: ignore[call-arg]
        self.graph = graph


class Objects3DOracle(_Oracle, Objects3D):
    def forward(self, views: list[Image], object_prompt: str) -> list[dict]:
        if not isinstance(object_prompt, str) or not object_prompt.strip():
            raise ModuleError(f"object_prompt must be a noun phrase such as 'red chair' or "
                              f"'objects', got {object_prompt!r}")
        world = self.graph.world(views)
        order: list[int] = []
        for view in views:
            scene_view = self.graph.scenes.view(view)
            query = scene_view.vocabulary.collect(object_prompt, FILLER)
            order += [o["id"] for o in scene_view.objects
                      if matches(o, query) and o["id"] not in order]
        by_id = {o["id"]: o for o in world["objects"]}
        return [{"center": list(by_id[i]["center_world"]), "size": list(by_id[i]["dimensions"]),
                 "yaw": by_id[i]["yaw_world"]} for i in order]


class CameraPoseOracle(_Oracle, CameraPose):
    def forward(self, view: Image) -> dict:
        camera = self.graph.frame(view)["camera"]
        return {"position": list(camera["position"]),
                "world_to_camera": [list(row) for row in camera["world_to_camera"]]}


class SameObjectAcrossOracle(_Oracle, SameObjectAcross):
    def forward(self, view1: Image, bbox1: BBox, view2: Image, bbox2: BBox) -> bool:
        return self.graph.object_id(view1, bbox1) == self.graph.object_id(view2, bbox2)


class RoomLayoutOracle(_Oracle, RoomLayout):
    def forward(self, views: list[Image]) -> dict:
        room = self.graph.world(views)["room"]
        return {k: float(room[k]) for k in ("width", "length", "height")}


def scene_graph_oracle_modules(frame_lookup: SceneLookup, world_lookup: WorldLookup) -> ViewModuleSet:
    """The four multi-view modules answered from the frame and world annotations."""
    graph = SceneGraph(frame_lookup, world_lookup)
    return ViewModuleSet(objects_3d=Objects3DOracle(graph), camera_pose=CameraPoseOracle(graph),
                         same_object_across=SameObjectAcrossOracle(graph),
                         room_layout=RoomLayoutOracle(graph))
