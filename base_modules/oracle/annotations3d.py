"""The five predefined modules answered from generic 3D annotations.

Works on any scene dict with an "objects" list whose entries carry a 2D box ("bbox2D_proj",
"bbox2D" or "bbox", [x0, y0, x1, y1] pixels), a category ("category_name", "category", "name"
or "label"), optionally "color" and "material", and a camera-frame depth ("depth", or the z of
"center_cam"). The built-in benchmark writes exactly this; so does Omni3D with a little renaming.

`depth` is the camera-frame z (metres) of the object's 3D box centre. Boxes handed to the other
modules resolve to an object by IoU, as for the CLEVR oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from base_modules.module import VQA, Depth, Loc, ModuleError, ObjectSize2D, SameObject
from base_modules.module import ModuleSet
from base_modules.oracle.annotations3d_vocab import (
    FILLER,
    Vocabulary,
    matches,
    object_attributes,
    parse_question,
)
from base_modules.oracle.clevr_scene import SceneView, annotation_position, as_box
from base_modules.types import BBox, Image

SceneLookup = Callable[[str], "dict[str, Any] | None"]
BOX_KEYS = ("bbox2D_proj", "bbox2D", "bbox")


def _depth(obj: dict[str, Any]) -> float | None:
    if obj.get("depth") is not None:
        return float(obj["depth"])
    centre = obj.get("center_cam")
    return float(centre[2]) if centre is not None else None


@dataclass(frozen=True)
class View(SceneView):
    """One annotated image, with the vocabulary its questions are parsed against."""

    vocabulary: Vocabulary


class Scenes:
    """Builds and caches a `View` per image id from a scene lookup."""

    def __init__(self, lookup: SceneLookup) -> None:
        self._lookup = lookup
        self._views: dict[str, View] = {}

    def view(self, image: Image) -> View:
        if image.image_id not in self._views:
            self._views[image.image_id] = self._build(image.image_id)
        return self._views[image.image_id]

    def annotation_index(self, image: Image, bbox: BBox) -> int:
        """Position in the annotation's `objects` of the object `bbox` shows (views sort them)."""
        return annotation_position(self._lookup(image.image_id), self.view(image), bbox)

    def _build(self, image_id: str) -> View:
        scene = self._lookup(image_id)
        if scene is None:
            raise ModuleError(f"no 3D annotation for image {image_id!r}; the oracle modules need "
                              "the annotation file of this image")
        objects = list(scene.get("objects") or [])
        boxes = []
        for k, obj in enumerate(objects):
            key = next((key for key in BOX_KEYS if obj.get(key) is not None), None)
            if key is None:
                raise ModuleError(f"image {image_id!r}: object #{k} has no 2D box (one of "
                                  f"{', '.join(BOX_KEYS)})")
            boxes.append(as_box(obj[key]))
        order = sorted(range(len(boxes)), key=lambda i: (*boxes[i], i))
        return View(image_id, tuple(objects[i] for i in order), tuple(boxes[i] for i in order),
                    Vocabulary.for_scene(scene))


class _Oracle:
    def __init__(self, scenes: Scenes) -> None:
        super().__init__(device="cpu")  # type: ignore[call-arg]
        self.scenes = scenes

    def annotation_index(self, image: Image, bbox: BBox) -> int:
        """Ground truth for checks: the annotation's index of the object `bbox` shows."""
        return self.scenes.annotation_index(image, bbox)


class Loc3D(_Oracle, Loc):
    def forward(self, image: Image, object_prompt: str) -> list[BBox]:
        if not isinstance(object_prompt, str) or not object_prompt.strip():
            raise ModuleError(f"object_prompt must be a noun phrase such as 'red chair' or "
                              f"'objects', got {object_prompt!r}")
        view = self.scenes.view(image)
        query = view.vocabulary.collect(object_prompt, FILLER)
        return [list(b) for o, b in zip(view.objects, view.boxes) if matches(o, query)]


class Depth3D(_Oracle, Depth):
    def forward(self, image: Image, bbox: BBox) -> float:
        view = self.scenes.view(image)
        value = _depth(view.objects[view.resolve(bbox)])
        if value is None:
            raise ModuleError(f"image {image.image_id!r}: the annotation has no depth for this "
                              "object ('depth' or 'center_cam')")
        return value


class VQA3D(_Oracle, VQA):
    def forward(self, image: Image, question: str, bbox: BBox) -> str:
        if not isinstance(question, str):
            raise ModuleError(f"question must be a string, got {question!r}")
        view = self.scenes.view(image)
        attribute, expected = parse_question(question, view.vocabulary)
        attrs = object_attributes(view.objects[view.resolve(bbox)])
        if attribute is None:
            return "yes" if all(attrs.get(a) == v for a, v in expected.items()) else "no"
        if attribute not in attrs:
            raise ModuleError(f"the annotation of this object has no {attribute}")
        return attrs[attribute]


class SameObject3D(_Oracle, SameObject):
    def forward(self, image: Image, bbox1: BBox, bbox2: BBox) -> bool:
        view = self.scenes.view(image)
        return view.resolve(bbox1) == view.resolve(bbox2)


class ObjectSize2D3D(_Oracle, ObjectSize2D):
    def forward(self, image: Image, bbox: BBox) -> tuple[float, float]:
        view = self.scenes.view(image)
        x0, y0, x1, y1 = view.boxes[view.resolve(bbox)]
        return (float(x1 - x0), float(y1 - y0))


def annotations3d_oracle_modules(scene_lookup: SceneLookup) -> ModuleSet:
    """All five modules answered from 3D annotations found by `scene_lookup(image_id)`."""
    scenes = Scenes(scene_lookup)
    return ModuleSet(loc=Loc3D(scenes), depth=Depth3D(scenes), vqa=VQA3D(scenes),
                     same_object=SameObject3D(scenes), get_2D_object_size=ObjectSize2D3D(scenes))


def is_annotations3d_scene(scene: dict[str, Any] | None) -> bool:
    """True when a scene dict has what these modules read (2D boxes and categories)."""
    objects = (scene or {}).get("objects")
    return bool(objects) and all(any(k in o for k in BOX_KEYS) and object_attributes(o)
                                 .get("category") for o in objects)
