"""Several frames of one scene in one world frame: cameras from a pose backend, points from
per-frame metric depth, and the objects and room those points show.

The pose backend is a feed-forward reconstruction model (VGGT by default) that sees all frames
at once and returns each frame's intrinsics and world-to-camera pose. Its world frame is its own
(VGGT: the first camera's, up to scale), so unless the backend says its poses are already metric
and upright, the cameras are scaled to the metric depth and turned upright
(`view_geometry.upright_alignment`). Depth maps and object masks come from the per-frame real
modules' `Perception` (or any callables with the same meaning, which is how the geometry is
tested against the oracle).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.config import RealModulesConfig, setting_name
from base_modules.real.loading import package_model
from base_modules.real.view_geometry import (
    CameraView,
    back_project,
    merge_detections,
    moved,
    object_box,
    room_extent,
    upright_alignment,
)
from base_modules.types import Image

VGGT_INSTALL = "pip install 'git+https://github.com/facebookresearch/vggt' (needs torchvision)"
ROOM_STRIDE = 4
"""Every 4th pixel in each direction of every frame is enough to find the walls."""

DepthOf = Callable[[Image], np.ndarray]
MasksOf = Callable[[Image, str], list[np.ndarray]]


class PoseBackend(Protocol):
    """Cameras of several frames of one scene, estimated together."""

    metric_upright: bool
    """True when poses are already in metres with z up and the floor at z = 0."""

    def load(self) -> None: ...

    def cameras(self, pixels: list[Any]) -> tuple[list[CameraView], list[np.ndarray] | None]:
        """One camera per frame (K in that frame's pixels) and, when the model predicts it,
        each frame's depth in the backend's own units (used to find the metric scale)."""
        ...


class VGGTPoses:
    """VGGT (facebookresearch/vggt, not on PyPI): cameras and depth of all frames in one pass."""

    metric_upright = False

    def __init__(self, config: RealModulesConfig) -> None:
        self.config = config
        self.model: Any = None

    def load(self) -> None:
        if self.model is None:
            self.model = package_model(self.config, "vggt", VGGT_INSTALL, "pose_backend", "vggt_model",
                                       _vggt_class)

    def cameras(self, pixels: list[Any]) -> tuple[list[CameraView], list[np.ndarray] | None]:
        import torch
        from vggt.utils.pose_enc import pose_encoding_to_extri_intri

        self.load()
        size = 518  # VGGT's input width; heights are multiples of its 14-pixel patches
        frames = []
        for picture in pixels:
            height = max(14, round(picture.height * size / picture.width / 14) * 14)
            resized = np.asarray(picture.convert("RGB").resize((size, height)), dtype=np.float32) / 255.0
            frames.append(torch.from_numpy(resized).permute(2, 0, 1))
        if len({f.shape for f in frames}) != 1:
            raise ModuleError("the frames of one scene must share one aspect ratio for VGGT")
        batch = torch.stack(frames)[None].to(self.model.device)
        with torch.inference_mode():
            out = self.model(batch)
            extrinsic, intrinsic = pose_encoding_to_extri_intri(out["pose_enc"], batch.shape[-2:])
        cameras, depths = [], []
        for k, picture in enumerate(pixels):
            scale = np.diag([picture.width / size, picture.height / batch.shape[-2], 1.0])
            pose = np.eye(4)
            pose[:3] = extrinsic[0, k].float().cpu().numpy()
            cameras.append(CameraView(scale @ intrinsic[0, k].float().cpu().numpy(), pose))
            depth = out["depth"][0, k, ..., 0].float().cpu().numpy()
            depths.append(_resize(depth, picture.height, picture.width))
        return cameras, depths


def _resize(array: np.ndarray, height: int, width: int) -> np.ndarray:
    from PIL import Image as PILImage

    return np.asarray(PILImage.fromarray(array.astype(np.float32)).resize((width, height)), dtype=np.float32)


def _vggt_class() -> Any:
    from vggt.models.vggt import VGGT

    return VGGT


def build_poses(config: RealModulesConfig) -> PoseBackend:
    if config.pose_backend == "vggt":
        return VGGTPoses(config)
    raise ModuleError(f"{setting_name('pose_backend')}: unknown backend {config.pose_backend!r}; choose vggt")


class Scene:
    """One scene's frames in the benchmark's world frame (metres, z up, floor at z = 0)."""

    def __init__(self, views: Sequence[Image], cameras: list[CameraView], depth_of: DepthOf,
                 masks_of: MasksOf, config: RealModulesConfig) -> None:
        self.views, self.cameras = list(views), cameras
        self._depth_of, self._masks_of, self.config = depth_of, masks_of, config

    def camera(self, view: Image) -> CameraView:
        return self.cameras[_index(self.views, view)]

    def points(self, stride: int = ROOM_STRIDE) -> np.ndarray:
        return np.concatenate([back_project(self._depth_of(v), c, stride=stride)
                               for v, c in zip(self.views, self.cameras)])

    def objects(self, prompt: str) -> list[dict]:
        detections = [(k, back_project(self._depth_of(view), camera, mask))
                      for k, (view, camera) in enumerate(zip(self.views, self.cameras))
                      for mask in self._masks_of(view, prompt)]
        merged = merge_detections(detections, self.config.merge_distance)
        return [object_box(o.points) for o in merged]

    def room(self) -> dict[str, float]:
        points = self.points()
        if len(points) == 0:
            raise ModuleError("no pixel of these frames has a valid depth")
        return room_extent(points, self.config.room_trim_percent)


def _index(views: Sequence[Image], view: Image) -> int:
    for k, other in enumerate(views):
        if (other.image_id, other.path) == (view.image_id, view.path):
            return k
    raise ModuleError(f"frame {view.image_id!r} is not one of this scene's frames")


class Reconstruction:
    """Builds (once per tuple of frames) the `Scene` of those frames."""

    def __init__(self, config: RealModulesConfig, poses: PoseBackend, pixels_of: Callable[[Image], Any],
                 depth_of: DepthOf, masks_of: MasksOf) -> None:
        self.config, self.poses = config, poses
        self._pixels_of, self._depth_of, self._masks_of = pixels_of, depth_of, masks_of
        self._scenes: dict[tuple[tuple[str, str], ...], Scene] = {}

    def scene(self, views: Sequence[Image]) -> Scene:
        views = _frames(views)
        key = tuple((v.image_id, v.path) for v in views)
        if key not in self._scenes:
            self._scenes[key] = self._build(views)
        return self._scenes[key]

    def _build(self, views: list[Image]) -> Scene:
        cameras, model_depths = self.poses.cameras([self._pixels_of(v) for v in views])
        if self.poses.metric_upright:
            return Scene(views, cameras, self._depth_of, self._masks_of, self.config)
        scale = 1.0
        if model_depths is not None:
            scale = metric_scale([self._depth_of(v) for v in views], model_depths)
        scaled = [moved(c, np.eye(4), scale) for c in cameras]
        raw = Scene(views, scaled, self._depth_of, self._masks_of, self.config)
        to_room = upright_alignment(scaled, raw.points(), self.config.floor_percent)
        return Scene(views, [moved(c, to_room) for c in scaled], self._depth_of, self._masks_of, self.config)


def metric_scale(metric: list[np.ndarray], model: list[np.ndarray]) -> float:
    """Metres per model unit: the median ratio of metric depth to the model's depth."""
    ratios = []
    for a, b in zip(metric, model):
        valid = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
        ratios.append(a[valid] / b[valid])
    values = np.concatenate(ratios) if ratios else np.array([])
    if values.size == 0:
        raise ModuleError("no pixel has both a metric depth and a reconstructed depth")
    return float(np.median(values))


def _frames(views: object) -> list[Image]:
    if isinstance(views, Image):
        return [views]
    if not isinstance(views, (list, tuple)) or not views or not all(isinstance(v, Image) for v in views):
        raise ModuleError("views must be a non-empty list of frames (pass `views`)")
    return list(views)
