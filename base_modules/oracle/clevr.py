"""The five predefined modules answered from CLEVR scene annotations.

Build them with `clevr_oracle_modules(scene_lookup)`; the `Image` handle's `image_id` selects
the scene. They share one `ClevrScenes` cache, so each scene's camera is fitted once.
"""

from __future__ import annotations

from base_modules.module import VQA, Depth, Loc, ModuleError, ObjectSize2D, SameObject
from base_modules.module import ModuleSet
from base_modules.oracle.clevr_scene import ClevrScenes, SceneLookup
from base_modules.oracle.clevr_vocab import parse_attribute_question, parse_object_prompt
from base_modules.types import BBox, Image


class _ClevrOracle:
    """Mixin: holds the shared scene cache."""

    def __init__(self, scenes: ClevrScenes) -> None:
        super().__init__(device="cpu")  # type: ignore[call-arg]
        self.scenes = scenes

    def annotation_index(self, image: Image, bbox: BBox) -> int:
        """Ground truth for checks: the scene file's index of the object `bbox` shows."""
        return self.scenes.annotation_index(image, bbox)


class ClevrLoc(_ClevrOracle, Loc):
    def forward(self, image: Image, object_prompt: str) -> list[BBox]:
        if not isinstance(object_prompt, str):
            raise ModuleError(f"object_prompt must be a string, got {object_prompt!r}")
        query = parse_object_prompt(object_prompt)
        view = self.scenes.view(image)
        return [list(box) for obj, box in zip(view.objects, view.boxes) if query.matches(obj)]


class ClevrDepth(_ClevrOracle, Depth):
    def forward(self, image: Image, bbox: BBox) -> float:
        view = self.scenes.view(image)
        return float(view.objects[view.resolve(bbox)]["pixel_coords"][2])


class ClevrVQA(_ClevrOracle, VQA):
    def forward(self, image: Image, question: str, bbox: BBox) -> str:
        if not isinstance(question, str):
            raise ModuleError(f"question must be a string, got {question!r}")
        parsed = parse_attribute_question(question)
        view = self.scenes.view(image)
        obj = view.objects[view.resolve(bbox)]
        if parsed.attribute is not None:
            return str(obj[parsed.attribute])
        return "yes" if all(obj[a] == v for a, v in parsed.expected.items()) else "no"


class ClevrSameObject(_ClevrOracle, SameObject):
    def forward(self, image: Image, bbox1: BBox, bbox2: BBox) -> bool:
        view = self.scenes.view(image)
        return view.resolve(bbox1) == view.resolve(bbox2)


class ClevrObjectSize2D(_ClevrOracle, ObjectSize2D):
    def forward(self, image: Image, bbox: BBox) -> tuple[float, float]:
        view = self.scenes.view(image)
        x0, y0, x1, y1 = view.boxes[view.resolve(bbox)]
        return (float(x1 - x0), float(y1 - y0))


def clevr_oracle_modules(scene_lookup: SceneLookup) -> ModuleSet:
    """All five modules answered from CLEVR annotations found by `scene_lookup(image_id)`."""
    scenes = ClevrScenes(scene_lookup)
    return ModuleSet(
        loc=ClevrLoc(scenes),
        depth=ClevrDepth(scenes),
        vqa=ClevrVQA(scenes),
        same_object=ClevrSameObject(scenes),
        get_2D_object_size=ClevrObjectSize2D(scenes),
    )
