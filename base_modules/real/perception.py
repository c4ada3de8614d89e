"""One object all five real modules share: the backends, loaded lazily, and the per-image cache.

`locate` runs detection (once per distinct prompt), class-agnostic NMS and box-prompted
segmentation, and hands out boxes tight around the masks; `mask_for` finds the mask behind any box
a program passes back; `depth_map` runs the depth model once per image.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.boxes import (
    as_box,
    box_region,
    clip_boxes,
    clip_mask_to_box,
    mask_to_box,
    nms,
    normalise_prompt,
)
from base_modules.real.cache import Detection, PerceptionCache
from base_modules.real.config import RealModulesConfig
from base_modules.real.depth import build_depth, object_depth
from base_modules.real.detector import build_detector
from base_modules.real.segmenter import build_segmenter
from base_modules.real.vlm import build_vlm, draw_box
from base_modules.types import Image

BOX_SHRINK = 0.25
"""Without a mask, depth is read from the box's central half, where the object usually is."""


class Perception:
    def __init__(self, config: RealModulesConfig | None = None, *, cache: PerceptionCache | None = None,
                 detector: Any = None, segmenter: Any = None, depth: Any = None, vlm: Any = None,
                 vqa_client: Any = None) -> None:
        self.config = config or RealModulesConfig()
        self.cache = cache or PerceptionCache(self.config.cache_images)
        # Backends are chosen now (a bad backend name fails at once) and load on first use.
        self.detector = detector or build_detector(self.config)
        self.segmenter = segmenter if segmenter is not None else build_segmenter(self.config)
        self.depth = depth or build_depth(self.config)
        self.vlm = vlm or build_vlm(self.config, vqa_client)

    # -- pixels -----------------------------------------------------------------------------------

    def pixels(self, image: Image) -> Any:
        entry = self.cache.entry(image)
        if entry.pixels is None:
            from PIL import Image as PILImage, UnidentifiedImageError

            try:
                with PILImage.open(image.path) as opened:
                    entry.pixels = opened.convert("RGB")
            except (OSError, UnidentifiedImageError) as exc:
                raise ModuleError(f"cannot read image {image.path}: {exc}") from None
        return entry.pixels

    # -- loc --------------------------------------------------------------------------------------

    def locate(self, image: Image, prompt: object) -> list[Detection]:
        query = normalise_prompt(prompt)
        entry = self.cache.entry(image)
        if query in entry.detections:
            self.cache.hits["loc"] += 1
            return entry.detections[query]
        self.cache.misses["loc"] += 1
        pixels = self.pixels(image)
        raw = self.detector.detect(pixels, query)
        boxes = clip_boxes(raw.boxes, pixels.width, pixels.height)
        valid = [i for i, b in enumerate(boxes) if b[2] - b[0] >= 1 and b[3] - b[1] >= 1]
        keep = [valid[i] for i in nms(boxes[valid], raw.scores[valid], self.config.nms_iou)]
        keep = keep[: self.config.max_detections]
        masks = self._segment(image, pixels, boxes[keep]) if keep else []
        detections = []
        for n, i in enumerate(keep):
            mask = masks[n] if len(masks) else None
            tight = mask_to_box(mask) if mask is not None else None
            detections.append(Detection(box=tight or [float(v) for v in boxes[i]],
                                        detector_box=[float(v) for v in boxes[i]],
                                        score=float(raw.scores[i]), label=raw.labels[i] if i < len(raw.labels) else query,
                                        mask=mask if tight else None))
        entry.detections[query] = detections
        self.cache.remember(image, detections)
        return detections

    def _segment(self, image: Image, pixels: Any, boxes: np.ndarray) -> list[np.ndarray]:
        if self.segmenter is None:
            return []
        embedding = self.cache.get_or_compute("image_embedding", image, None,
                                              lambda: self.segmenter.embed(pixels))
        masks = self.segmenter.segment(pixels, boxes, embedding)
        return [clip_mask_to_box(m, b, self.config.mask_box_margin) for m, b in zip(masks, boxes)]

    # -- masks for boxes programs pass back ---------------------------------------------------------

    def mask_for(self, image: Image, bbox: object) -> np.ndarray | None:
        """The object's mask: from `loc`'s cache, else segmented on demand, else None (no segmenter)."""
        box = as_box(bbox)
        found = self.cache.find_object(image, box)
        if found is not None:
            self.cache.hits["mask"] += 1
            return found.mask
        if self.segmenter is None:
            return None
        pixels = self.pixels(image)
        box = clip_boxes(box, pixels.width, pixels.height)[0]
        if box[2] - box[0] < 1 or box[3] - box[1] < 1:
            return None
        key = tuple(round(float(v), 1) for v in box)

        def segment() -> np.ndarray | None:
            masks = self._segment(image, pixels, box[None])
            return masks[0] if masks and masks[0].any() else None

        return self.cache.get_or_compute("mask", image, key, segment)

    def region(self, image: Image, bbox: object) -> np.ndarray:
        """The object's pixels: its mask, or the central part of its box."""
        mask = self.mask_for(image, bbox)
        if mask is not None and mask.any():
            return mask
        pixels = self.pixels(image)
        return box_region(clip_boxes(as_box(bbox), pixels.width, pixels.height)[0],
                          pixels.width, pixels.height, BOX_SHRINK)

    # -- depth ------------------------------------------------------------------------------------

    def depth_map(self, image: Image) -> np.ndarray:
        return self.cache.get_or_compute("depth_map", image, None,
                                         lambda: self.depth.depth_map(self.pixels(image)))

    def object_depth(self, image: Image, bbox: object) -> float:
        depth_map = self.depth_map(image)
        value = object_depth(depth_map, self.region(image, bbox), self.config.depth_statistic)
        if value is None:
            pixels = self.pixels(image)
            box = clip_boxes(as_box(bbox), pixels.width, pixels.height)[0]
            value = object_depth(depth_map, box_region(box, pixels.width, pixels.height), "median")
        if value is None:
            raise ModuleError(f"no valid depth inside bbox {bbox!r}")
        return value

    # -- vqa --------------------------------------------------------------------------------------

    def answer(self, image: Image, question: object, bbox: object) -> str:
        if not isinstance(question, str) or not question.strip():
            raise ModuleError(f"question must be a non-empty string, got {question!r}")
        box = as_box(bbox)
        key = (" ".join(question.lower().split()), tuple(round(float(v), 1) for v in box))

        def ask() -> str:
            marked = draw_box(self.pixels(image), box, self.config.vqa_box_width)
            return self.vlm.answer(marked, question)

        return self.cache.get_or_compute("vqa", image, key, ask)
