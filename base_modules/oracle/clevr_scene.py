"""Per-image oracle state for CLEVR: the scene, its fitted camera and each object's 2D box.

Modules receive only boxes, so every call other than `loc` first resolves its box back to one
annotated object. Resolution is by IoU against the oracle boxes, which also accepts boxes that a
program built itself (e.g. slightly shifted) while rejecting boxes that show no single object.
`SceneView` holds that resolution for the 3D-annotation oracle too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from base_modules.module import ModuleError
from base_modules.oracle.clevr_camera import ClevrCamera, fit_camera
from base_modules.oracle.clevr_geometry import object_box
from base_modules.types import BBox, Image

SceneLookup = Callable[[str], "dict[str, Any] | None"]
"""image_id -> CLEVR scene dict (None when the image has no annotation)."""

MATCH_IOU = 0.5
"""A box resolves to the object whose oracle box it overlaps best, if the IoU reaches this."""


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def box_error(bbox: Any) -> str:
    """What was wrong with a value passed as one box, and how to fix the call."""
    if isinstance(bbox, (list, tuple)) and not bbox:
        return ("expected one box [x_min, y_min, x_max, y_max], got an empty list: loc found no "
                "such object; check len(boxes) > 0 before using boxes[0]")
    if isinstance(bbox, (list, tuple)) and all(isinstance(b, (list, tuple)) for b in bbox):
        return (f"expected one box [x_min, y_min, x_max, y_max], got a list of {len(bbox)} boxes: "
                "loc returns a list of boxes; pass one of them, such as boxes[0], or loop over them")
    return f"expected a box [x_min, y_min, x_max, y_max], got {bbox!r}"


def as_box(bbox: Any) -> tuple[float, float, float, float]:
    """`bbox` as four floats, or a ModuleError saying what a box must look like."""
    try:
        values = tuple(float(v) for v in bbox)
    except (TypeError, ValueError):
        values = ()
    if len(values) != 4 or values[2] < values[0] or values[3] < values[1]:
        raise ModuleError(box_error(bbox))
    return values  # type: ignore[return-value]


@dataclass(frozen=True)
class SceneView:
    """Annotated objects of one image with their boxes, sorted left to right.

    Shared by every oracle that answers from per-object boxes, so a box resolves (or fails to)
    the same way whichever annotation it came from.
    """

    image_id: str
    objects: tuple[dict[str, Any], ...]
    boxes: tuple[tuple[float, float, float, float], ...]

    def resolve(self, bbox: BBox) -> int:
        """Index (into `objects`) of the object shown by `bbox`; ModuleError if none."""
        box = as_box(bbox)
        scores = [iou(box, b) for b in self.boxes]
        best = max(range(len(scores)), key=scores.__getitem__, default=None)
        if best is None or scores[best] < MATCH_IOU:
            top = f"{scores[best]:.2f}" if best is not None else "n/a"
            raise ModuleError(
                f"box {list(box)} matches no object in image {self.image_id} (best IoU {top} < "
                f"{MATCH_IOU}); pass a box returned by loc"
            )
        return best


@dataclass(frozen=True)
class ClevrView(SceneView):
    """One CLEVR scene as seen in one image, with the camera fitted to that image size."""

    camera: ClevrCamera


class ClevrScenes:
    """Builds and caches a `ClevrView` per image from a scene lookup."""

    def __init__(self, scene_lookup: SceneLookup) -> None:
        self._lookup = scene_lookup
        self._views: dict[tuple[str, int, int], ClevrView] = {}

    def view(self, image: Image) -> ClevrView:
        key = (image.image_id, image.width, image.height)
        if key not in self._views:
            self._views[key] = self._build(image)
        return self._views[key]

    def annotation_index(self, image: Image, bbox: BBox) -> int:
        """Position in the scene file's `objects` of the object `bbox` shows (views sort them)."""
        return annotation_position(self._lookup(image.image_id), self.view(image), bbox)

    def _build(self, image: Image) -> ClevrView:
        scene = self._lookup(image.image_id)
        if scene is None:
            raise ModuleError(
                f"no CLEVR scene annotation for image {image.image_id!r}; the oracle modules "
                "need the scene file that covers this image"
            )
        camera = fit_camera(scene, image.width, image.height)
        boxes = [tuple(object_box(o, camera, image.width, image.height))
                 for o in scene["objects"]]
        order = sorted(range(len(boxes)), key=lambda i: (*boxes[i], i))
        return ClevrView(
            image_id=image.image_id,
            objects=tuple(scene["objects"][i] for i in order),
            boxes=tuple(boxes[i] for i in order),  # type: ignore[misc]
            camera=camera,
        )


def annotation_position(scene: dict[str, Any] | None, view: SceneView, bbox: BBox) -> int:
    """Where the object `bbox` shows sits in the scene file's `objects` (a view sorts them by box)."""
    shown = view.objects[view.resolve(bbox)]
    objects = list((scene or {}).get("objects") or [])
    for same in (lambda o: o is shown, lambda o: o == shown):
        found = next((k for k, o in enumerate(objects) if same(o)), None)
        if found is not None:
            return found
    raise ModuleError(f"the object of box {list(as_box(bbox))} is not in the scene file of {view.image_id}")
