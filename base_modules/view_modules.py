"""Modules over several views of one scene: a 3D scene graph in world coordinates, camera poses
and cross-view association.

As in `module.py`, each spec class owns the signature and docstring the LLM reads
(`module_stub`); oracle twins (`base_modules.oracle.scene_graph`) and model-backed twins
(`base_modules.real.scene_graph`) subclass them. Programs receive these only for questions about
several frames of one scene, beside `views` (the frames, in order).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from base_modules.module import Module
from base_modules.types import BBox, Image


class Objects3D(Module):
    name = "objects_3d"

    @abstractmethod
    def forward(self, views: list[Image], object_prompt: str) -> list[dict]:
        """Find every object matching `object_prompt` ("chair", "red chair", "objects") across
        all the frames in `views`, each physical object once, in the order they first appear.
        Returns one dict per object in world coordinates (metres, z up, floor at z = 0):
        {"center": [x, y, z], "size": [width, length, height], "yaw": radians about z}."""


class CameraPose(Module):
    name = "camera_pose"

    @abstractmethod
    def forward(self, view: Image) -> dict:
        """Return where the camera of this frame stood, in world coordinates (metres, z up):
        {"position": [x, y, z], "world_to_camera": 4x4 matrix as nested lists} (camera axes:
        x right, y down, z forward)."""


class SameObjectAcross(Module):
    name = "same_object_across"

    @abstractmethod
    def forward(self, view1: Image, bbox1: BBox, view2: Image, bbox2: BBox) -> bool:
        """Return True if the object in `bbox1` of frame `view1` is the same physical object as
        the one in `bbox2` of frame `view2` (boxes as returned by `loc` on those frames)."""


class RoomLayout(Module):
    name = "room_layout"

    @abstractmethod
    def forward(self, views: list[Image]) -> dict:
        """Return the extent of the room the frames show, in metres:
        {"width": float, "length": float, "height": float} (floor area = width * length)."""


VIEW_MODULES: tuple[type[Module], ...] = (Objects3D, CameraPose, SameObjectAcross, RoomLayout)
"""The multi-view API, in the order the LLM sees it after the predefined modules."""


@dataclass
class ViewModuleSet:
    """One module per multi-view slot; field names are the names programs call them by."""

    objects_3d: Objects3D
    camera_pose: CameraPose
    same_object_across: SameObjectAcross
    room_layout: RoomLayout

    def __post_init__(self) -> None:
        for spec in VIEW_MODULES:
            if not isinstance(getattr(self, spec.name), spec):
                raise TypeError(f"ViewModuleSet.{spec.name} must implement {spec.__name__}, "
                                f"got {getattr(self, spec.name)!r}")

    def as_namespace(self) -> dict[str, Any]:
        return {spec.name: getattr(self, spec.name) for spec in VIEW_MODULES}

    def for_views(self, views: list[Image]) -> ViewModuleSet:
        """The set as a program about the frames `views` calls it: a module that reconstructs
        the scene from all its frames (`for_views(views)`) learns them; others are unchanged."""
        def bound(module: Module) -> Module:
            bind = getattr(module, "for_views", None)
            return bind(views) if callable(bind) else module

        return ViewModuleSet(**{spec.name: bound(getattr(self, spec.name)) for spec in VIEW_MODULES})

    def __iter__(self) -> Iterator[Module]:
        return iter(self.as_namespace().values())
