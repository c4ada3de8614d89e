"""The five predefined modules backed by models, all over one shared `Perception`."""

from __future__ import annotations

from typing import Any

import numpy as np

from base_modules.module import VQA, Depth, Loc, ObjectSize2D, SameObject
from base_modules.module import ModuleSet
from base_modules.real.boxes import as_box, box_iou, mask_iou, mask_to_box
from base_modules.real.config import RealModulesConfig
from base_modules.real.perception import Perception
from base_modules.types import BBox, Image


class _Real:
    """Mixin: holds the shared perception object (backends and cache)."""

    def __init__(self, perception: Perception) -> None:
        super().__init__(device=perception.config.device)  # type: ignore[call-arg]
        self.perception = perception


class RealLoc(_Real, Loc):
    def _load(self) -> None:
        self.perception.detector.load()
        if self.perception.segmenter is not None:
            self.perception.segmenter.load()

    def forward(self, image: Image, object_prompt: str) -> list[BBox]:
        return [list(d.box) for d in self.perception.locate(image, object_prompt)]


class RealDepth(_Real, Depth):
    def _load(self) -> None:
        self.perception.depth.load()

    def forward(self, image: Image, bbox: BBox) -> float:
        return self.perception.object_depth(image, bbox)


class RealVQA(_Real, VQA):
    def _load(self) -> None:
        self.perception.vlm.load()

    def forward(self, image: Image, question: str, bbox: BBox) -> str:
        return self.perception.answer(image, question, bbox)


class RealSameObject(_Real, SameObject):
    def forward(self, image: Image, bbox1: BBox, bbox2: BBox) -> bool:
        a, b = as_box(bbox1), as_box(bbox2)
        threshold = self.perception.config.same_object_iou
        mask_a, mask_b = self.perception.mask_for(image, a), self.perception.mask_for(image, b)
        if mask_a is not None and mask_b is not None:
            return mask_iou(mask_a, mask_b) > threshold
        return bool(box_iou(a, b)[0, 0] > threshold)


class RealObjectSize2D(_Real, ObjectSize2D):
    def forward(self, image: Image, bbox: BBox) -> tuple[float, float]:
        box: Any = as_box(bbox)
        mask = self.perception.mask_for(image, box)
        tight = mask_to_box(mask) if mask is not None else None
        x0, y0, x1, y1 = np.asarray(tight if tight else box, dtype=float)
        return (float(x1 - x0), float(y1 - y0))


def real_modules(config: RealModulesConfig | None = None, *, perception: Perception | None = None) -> ModuleSet:
    """All five modules over one `Perception` (built from `config` when not given)."""
    shared = perception or Perception(config)
    return ModuleSet(loc=RealLoc(shared), depth=RealDepth(shared), vqa=RealVQA(shared),
                     same_object=RealSameObject(shared), get_2D_object_size=RealObjectSize2D(shared))
