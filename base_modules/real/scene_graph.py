"""The four multi-view modules backed by models, beside the per-frame real modules.

`same_object_across` follows the box of one frame into the other with SAM 2's video predictor;
`objects_3d`, `camera_pose` and `room_layout` read one reconstruction of the scene: cameras from
the pose backend (VGGT), points from the `depth` model's metric maps, objects from `loc`'s masks.
A program about a scene gets modules bound to its frames (`ViewModuleSet.for_views`), so
`camera_pose(views[2])` places that frame among all of them rather than alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.boxes import as_box, box_iou, box_region, clip_boxes, mask_to_box
from base_modules.real.config import RealModulesConfig
from base_modules.real.perception import Perception
from base_modules.real.reconstruction import PoseBackend, Reconstruction, build_poses
from base_modules.real.tracker import Sam2VideoTracker
from base_modules.types import BBox, Image
from base_modules.view_modules import CameraPose, Objects3D, RoomLayout, SameObjectAcross, ViewModuleSet


class _RealView:
    """Mixin: the shared reconstruction and the frames of the scene a program is about."""

    def __init__(self, reconstruction: Reconstruction, frames: Sequence[Image] = ()) -> None:
        super().__init__(device=reconstruction.config.device)  # type: ignore[call-arg]
        self.reconstruction = reconstruction
        self.frames = list(frames)

    def _load(self) -> None:
        self.reconstruction.poses.load()

    def for_views(self, views: Sequence[Image]) -> Any:
        return type(self)(self.reconstruction, views)


class RealObjects3D(_RealView, Objects3D):
    def forward(self, views: list[Image], object_prompt: str) -> list[dict]:
        return self.reconstruction.scene(views).objects(object_prompt)


class RealCameraPose(_RealView, CameraPose):
    def forward(self, view: Image) -> dict:
        if not isinstance(view, Image):
            raise ModuleError(f"expected one frame from `views` (an Image), got {type(view).__name__}")
        frames = self.frames if any(f.image_id == view.image_id for f in self.frames) else [view]
        camera = self.reconstruction.scene(frames).camera(view)
        return {"position": [float(v) for v in camera.position],
                "world_to_camera": camera.world_to_camera.tolist()}


class RealRoomLayout(_RealView, RoomLayout):
    def forward(self, views: list[Image]) -> dict:
        return self.reconstruction.scene(views).room()


class RealSameObjectAcross(SameObjectAcross):
    def __init__(self, perception: Perception, tracker: Any) -> None:
        super().__init__(device=perception.config.device)
        self.perception, self.tracker = perception, tracker

    def _load(self) -> None:
        self.tracker.load()

    def forward(self, view1: Image, bbox1: BBox, view2: Image, bbox2: BBox) -> bool:
        first, second = as_box(bbox1), as_box(bbox2)
        key = (view2.image_id, view2.path, tuple(round(float(v), 1) for v in first))
        pixels1 = self.perception.pixels(view1)
        mask = self.perception.cache.get_or_compute(
            "track", view1, key, lambda: self.tracker.follow(pixels1, first, self.perception.pixels(view2)))
        followed = mask_to_box(mask)
        if followed is None:
            return False
        return bool(box_iou(np.asarray(followed), second)[0, 0] > self.perception.config.track_iou)


def perception_masks(perception: Perception) -> Callable[[Image, str], list[np.ndarray]]:
    """`loc`'s masks of every object matching a prompt in a frame (its box where no mask)."""
    def masks_of(view: Image, prompt: str) -> list[np.ndarray]:
        pixels = perception.pixels(view)
        masks = []
        for detection in perception.locate(view, prompt):
            if detection.mask is not None:
                masks.append(detection.mask)
            else:
                box = clip_boxes(np.asarray(detection.box), pixels.width, pixels.height)[0]
                masks.append(box_region(box, pixels.width, pixels.height, 0.0))
        return masks

    return masks_of


def real_view_modules(config: RealModulesConfig | None = None, *, perception: Perception | None = None,
                      poses: PoseBackend | None = None, tracker: Any = None) -> ViewModuleSet:
    """The four multi-view modules over one `Perception` (shared with the per-frame real modules
    when given), the pose backend `config.pose_backend` names and the SAM 2 video tracker."""
    shared = perception or Perception(config)
    cfg = shared.config
    reconstruction = Reconstruction(cfg, poses or build_poses(cfg), shared.pixels, shared.depth_map,
                                    perception_masks(shared))
    return ViewModuleSet(objects_3d=RealObjects3D(reconstruction), camera_pose=RealCameraPose(reconstruction),
                         same_object_across=RealSameObjectAcross(shared, tracker or Sam2VideoTracker(cfg)),
                         room_layout=RealRoomLayout(reconstruction))
