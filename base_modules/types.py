"""Plain data types shared by every perception module and by generated programs."""

from __future__ import annotations

from dataclasses import dataclass

BBox = list[float]
"""An axis-aligned box [x_min, y_min, x_max, y_max] in pixels of the original image."""


@dataclass(frozen=True)
class Image:
    """Handle to the image a program reasons about.

    Programs receive it as `image` and pass it to modules unchanged; it is plain data so that it
    can cross the sandbox boundary. Modules resolve `path` (pixels) or `image_id` (annotations).
    `focal_length` (pixels) lets programs turn pixel sizes into metres with depth; None when the
    camera is unknown.
    """

    image_id: str
    path: str
    width: int
    height: int
    focal_length: float | None = None


@dataclass(frozen=True)
class Region:
    """A part of the image a question points at with a token (`<mask>`), given as a box or mask.

    `name` is the identifier the question text uses once its tokens are rewritten ("<pallet_0>");
    `box` is in `loc`'s format; `mask_size` ([height, width]) and `mask_counts` (compressed COCO
    RLE) hold the mask when there is one (see base_modules.masks); `object_id` names the annotated
    object the region shows, for the oracle tools. Plain data, so it can be stored and shipped.
    """

    name: str
    box: tuple[float, float, float, float]
    mask_size: tuple[int, int] | None = None
    mask_counts: str | None = None
    object_id: int | None = None
