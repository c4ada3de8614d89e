"""Per-image cache of model outputs, shared by all five real modules.

A program that calls `loc("chair")` ten times and `depth` on every box should run the detector
once per distinct prompt, the depth model once per image and the segmenter once per box. Entries
are keyed by image (id and path) and evicted least-recently-used, so a long run stays bounded.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.boxes import box_iou
from base_modules.types import Image

T = TypeVar("T")

MATCH_IOU = 0.9
"""A box counts as a cached object's box when it overlaps it this much (boxes round-trip as floats)."""


@dataclass
class Detection:
    """One located object: the returned (mask-tight) box, the detector's box and score, its mask."""

    box: list[float]
    detector_box: list[float]
    score: float
    label: str
    mask: np.ndarray | None = None


@dataclass
class ImageEntry:
    """Everything computed for one image."""

    pixels: Any = None  # PIL image, RGB
    detections: dict[str, list[Detection]] = field(default_factory=dict)  # per normalised prompt
    objects: list[Detection] = field(default_factory=list)  # every box handed out, for mask lookup
    depth_map: np.ndarray | None = None
    extra: dict[Any, Any] = field(default_factory=dict)  # backend-specific (image embeddings, answers)


class PerceptionCache:
    """LRU over images; counts hits and misses per kind of output for the benchmark."""

    def __init__(self, max_images: int = 16) -> None:
        self.max_images = max(1, max_images)
        self._entries: OrderedDict[tuple[str, str], ImageEntry] = OrderedDict()
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()

    def entry(self, image: Image) -> ImageEntry:
        if not isinstance(image, Image):
            raise ModuleError(f"image must be the Image handle the program was given, got {image!r}")
        key = (image.image_id, image.path)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = ImageEntry()
            while len(self._entries) > self.max_images:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        return entry

    def get_or_compute(self, kind: str, image: Image, key: Any, compute: Callable[[], T]) -> T:
        """`compute()` once per (image, kind, key); later calls return the stored value."""
        store = self.entry(image).extra
        full_key = (kind, key)
        if full_key in store:
            self.hits[kind] += 1
            return store[full_key]
        self.misses[kind] += 1
        value = compute()
        store[full_key] = value
        return value

    def find_object(self, image: Image, box: np.ndarray) -> Detection | None:
        """The handed-out object whose box (mask-tight or detector) best matches `box`, if any."""
        objects = self.entry(image).objects
        if not objects:
            return None
        tight = box_iou(box, np.array([o.box for o in objects]))[0]
        loose = box_iou(box, np.array([o.detector_box for o in objects]))[0]
        best = np.maximum(tight, loose)
        index = int(best.argmax())
        return objects[index] if best[index] >= MATCH_IOU else None

    def remember(self, image: Image, detections: list[Detection]) -> None:
        self.entry(image).objects.extend(detections)

    def hit_rate(self, kind: str | None = None) -> float:
        hits = sum(self.hits.values()) if kind is None else self.hits[kind]
        total = hits + (sum(self.misses.values()) if kind is None else self.misses[kind])
        return hits / total if total else 0.0

    def stats(self) -> dict[str, dict[str, int]]:
        kinds = sorted(set(self.hits) | set(self.misses))
        return {k: {"hits": self.hits[k], "misses": self.misses[k]} for k in kinds}

    def clear(self) -> None:
        self._entries.clear()
        self.hits.clear()
        self.misses.clear()

    def __len__(self) -> int:
        return len(self._entries)
