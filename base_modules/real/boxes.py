"""Box and mask geometry in numpy: NMS, IoU, mask-to-box, prompt normalisation.

Kept free of torch so it is tested in the default suite and shared by every backend.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from base_modules.module import ModuleError
from base_modules.types import BBox

ALL_OBJECTS_PROMPTS = frozenset({"objects", "object", "all objects", "things", "items", "everything"})
ALL_OBJECTS_QUERY = "object"


def normalise_prompt(prompt: object) -> str:
    """Lower-case, single-spaced, no trailing period: the cache key and the detector's query."""
    if not isinstance(prompt, str):
        raise ModuleError(f"object_prompt must be a string, got {prompt!r}")
    text = re.sub(r"\s+", " ", prompt.strip().lower()).strip(" .")
    if not text:
        raise ModuleError("object_prompt is empty; pass a noun phrase such as 'chair' or 'objects'")
    return ALL_OBJECTS_QUERY if text in ALL_OBJECTS_PROMPTS else text


def as_box(bbox: object) -> np.ndarray:
    """Validate a program-supplied box and return it as float64 [x0, y0, x1, y1]."""
    try:
        box = np.asarray(bbox, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ModuleError(f"bbox must be [x_min, y_min, x_max, y_max], got {bbox!r}") from None
    if box.shape != (4,) or not np.all(np.isfinite(box)):
        raise ModuleError(f"bbox must be 4 finite numbers [x_min, y_min, x_max, y_max], got {bbox!r}")
    if box[2] < box[0] or box[3] < box[1]:
        raise ModuleError(f"bbox {bbox!r} has x_max < x_min or y_max < y_min")
    return box


def clip_boxes(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    out = np.asarray(boxes, dtype=np.float64).reshape(-1, 4).copy()
    out[:, [0, 2]] = out[:, [0, 2]].clip(0, width)
    out[:, [1, 3]] = out[:, [1, 3]].clip(0, height)
    return out


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of boxes a (N, 4) and b (M, 4) -> (N, M)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    x0 = np.maximum(a[:, None, 0], b[None, :, 0])
    y0 = np.maximum(a[:, None, 1], b[None, :, 1])
    x1 = np.minimum(a[:, None, 2], b[None, :, 2])
    y1 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = (x1 - x0).clip(0) * (y1 - y0).clip(0)
    area_a = (a[:, 2] - a[:, 0]).clip(0) * (a[:, 3] - a[:, 1]).clip(0)
    area_b = (b[:, 2] - b[:, 0]).clip(0) * (b[:, 3] - b[:, 1]).clip(0)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def nms(boxes: np.ndarray, scores: Sequence[float] | np.ndarray, iou_threshold: float) -> list[int]:
    """Class-agnostic greedy NMS: indices kept, best score first.

    Class-agnostic because one object matched by two phrases of the prompt is still one object.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    order = list(np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable"))
    keep: list[int] = []
    while order:
        best, rest = order[0], order[1:]
        keep.append(int(best))
        if not rest:
            break
        ious = box_iou(boxes[best], boxes[rest])[0]
        order = [i for i, iou in zip(rest, ious) if iou <= iou_threshold]
    return keep


def mask_to_box(mask: np.ndarray) -> BBox | None:
    """Tight box around a boolean mask, in pixel-edge coordinates (a 1-pixel mask is 1 wide)."""
    ys, xs = np.nonzero(mask)
    if xs.size == 0:
        return None
    return [float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)]


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    inter = np.logical_and(a, b).sum()
    union = np.logical_or(a, b).sum()
    return float(inter / union) if union else 0.0


def clip_mask_to_box(mask: np.ndarray, box: np.ndarray, margin: float) -> np.ndarray:
    """Zero the mask outside `box` grown by `margin` of its size (stops masks bleeding into neighbours)."""
    h, w = mask.shape
    bw, bh = box[2] - box[0], box[3] - box[1]
    x0 = int(max(0, np.floor(box[0] - margin * bw)))
    y0 = int(max(0, np.floor(box[1] - margin * bh)))
    x1 = int(min(w, np.ceil(box[2] + margin * bw)))
    y1 = int(min(h, np.ceil(box[3] + margin * bh)))
    out = np.zeros_like(mask, dtype=bool)
    out[y0:y1, x0:x1] = mask[y0:y1, x0:x1]
    return out


def box_region(box: np.ndarray, width: int, height: int, shrink: float = 0.0) -> np.ndarray:
    """Boolean mask of a box (shrunk towards its centre by `shrink` of its size on each side)."""
    bw, bh = box[2] - box[0], box[3] - box[1]
    x0 = int(np.clip(np.floor(box[0] + shrink * bw), 0, width - 1))
    y0 = int(np.clip(np.floor(box[1] + shrink * bh), 0, height - 1))
    x1 = int(np.clip(np.ceil(box[2] - shrink * bw), x0, width))
    y1 = int(np.clip(np.ceil(box[3] - shrink * bh), y0, height))
    region = np.zeros((height, width), dtype=bool)
    region[y0:max(y1, y0 + 1), x0:max(x1, x0 + 1)] = True
    return region
