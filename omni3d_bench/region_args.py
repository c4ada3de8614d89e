"""Regions a user gives one at a time (`vadar solve --region`), as a box or as a file.

An annotation tool hands out a click's box, a drawn box or a mask; each becomes one unnamed
`Region`, read by the same code as a data set's regions (`omni3d_bench.regions.read_region`,
masks through `base_modules.masks`), then named from the question's `<mask>` tokens like any
other. Accepted forms:
- `x0,y0,x1,y1`: a box in pixels (ints or floats), x1 > x0 and y1 > y0;
- a `.json` file holding one region record: `{"box": [...]}` and/or `{"mask": {"size": [h, w],
  "counts": ...}}` (COCO RLE, compressed string or run lengths), optional `"object_id"`;
- a `.png` (or other image Pillow reads) or `.npy` binary mask: nonzero pixels are the region
  (for an image with an alpha channel, its non-transparent pixels).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

import numpy as np

from base_modules.masks import MAX_MASK_PIXELS, encode_rle
from base_modules.types import Region
from omni3d_bench.regions import read_region
from omni3d_bench.types import DatasetError

_NUMBER = r"\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*"
BOX = re.compile(rf"{_NUMBER},{_NUMBER},{_NUMBER},{_NUMBER}")
_NUMERIC = re.compile(r"[\s\d.,eE+-]+")
BOX_FORM = "x0,y0,x1,y1 (pixels)"


def read_region_arg(text: str) -> Region:
    """The region one `--region` argument gives: a box `x0,y0,x1,y1` or a region file."""
    where = f"--region {text}"
    if BOX.fullmatch(text):
        x0, y0, x1, y1 = (float(v) for v in text.split(","))
        if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
            raise DatasetError(f"{where}: a box is four finite numbers, {BOX_FORM}")
        if x1 <= x0 or y1 <= y0:
            raise DatasetError(f"{where}: a box needs x1 > x0 and y1 > y0, as {BOX_FORM}")
        return Region(name="", box=(x0, y0, x1, y1))
    path = Path(text).expanduser()
    if not path.is_file():
        if "," in text and _NUMERIC.fullmatch(text):
            raise DatasetError(f"{where}: a box is four numbers, {BOX_FORM}")
        raise DatasetError(f"{where}: no such file; give a box {BOX_FORM} or a region file "
                           "(.json, .png, .npy)")
    if path.suffix.lower() == ".json":
        return _json_region(path, where)
    mask = _npy_mask(path, where) if path.suffix.lower() == ".npy" else _image_mask(path, where)
    if not mask.any():
        raise DatasetError(f"{where}: the mask is empty (no nonzero pixel)")
    return read_region({"mask": encode_rle(mask)}, where)


def _json_region(path: Path, where: str) -> Region:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, a 5,000-digit int
        raise DatasetError(f"{where}: not valid JSON: {exc}") from None
    return read_region(raw, where)


def _npy_mask(path: Path, where: str) -> np.ndarray:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)  # the header first: shape and type
    except (OSError, ValueError, EOFError) as exc:
        raise DatasetError(f"{where}: cannot read the mask: {exc}") from None
    if not isinstance(array, np.ndarray) or array.ndim != 2:
        shape = getattr(array, "shape", None)
        raise DatasetError(f"{where}: a mask must be a 2D array (height, width), got shape {shape}")
    if array.dtype.kind not in "biuf":
        raise DatasetError(f"{where}: a mask must hold numbers or booleans, not {array.dtype} values")
    _check_pixels(array.shape[0], array.shape[1], where)
    try:
        return np.asarray(array != 0)
    except (OSError, ValueError) as exc:  # a file shorter than its header says
        raise DatasetError(f"{where}: cannot read the mask: {exc}") from None


def _check_pixels(height: int, width: int, where: str) -> None:
    if height * width > MAX_MASK_PIXELS:
        raise DatasetError(f"{where}: the mask is {width}x{height} pixels, more than the "
                           f"{MAX_MASK_PIXELS:,} of any image read")


def _image_mask(path: Path, where: str) -> np.ndarray:
    from PIL import Image as PILImage, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # the size is checked below, before any pixel is decoded
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
            picture = PILImage.open(path)
        with picture:
            _check_pixels(picture.height, picture.width, where)
            if "A" in picture.getbands() or "transparency" in picture.info:
                return np.asarray(picture.convert("RGBA"))[..., 3] > 0
            pixels = np.asarray(picture.convert("RGB") if picture.mode not in ("1", "L", "I", "F") else picture)
    except DatasetError:
        raise
    except PILImage.DecompressionBombError:
        raise DatasetError(f"{where}: the mask image has more than the {MAX_MASK_PIXELS:,} pixels of any "
                           "image read") from None
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise DatasetError(f"{where}: not a mask image (.png) or a mask array (.npy): {exc}") from None
    return pixels.any(axis=2) if pixels.ndim == 3 else pixels != 0


def check_in_image(region: Region, width: int, height: int, where: str) -> None:
    """Fail when `region` does not fit the image it points into: its box leaves the image, or
    its mask has another size than the image."""
    if region.mask_size is not None and tuple(region.mask_size) != (height, width):
        h, w = region.mask_size
        raise DatasetError(f"{where}: the mask is {w}x{h} pixels but the image is {width}x{height}")
    x0, y0, x1, y1 = region.box
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
        raise DatasetError(f"{where}: the box {_box_text(region.box)} leaves the image "
                           f"(0,0,{width},{height})")


def _box_text(box: tuple[float, float, float, float]) -> str:
    return ",".join(f"{v:g}" for v in box)
