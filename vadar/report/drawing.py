"""Draw a question's boxes onto its image with Pillow (the page sets their labels beside them).

Small images (CLEVR and the built-in benchmark are 480x320) are enlarged before drawing so that
outlines stay sharp; the result is a JPEG, about a tenth of a PNG of the same picture, because a
100-question report carries one picture per question. A missing image becomes a grey placeholder
of the recorded size with the boxes still drawn, so the geometry can be read without the data.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageColor, ImageDraw, ImageFont

from base_modules.region_tools import region_mask
from base_modules.types import Region
from vadar.report.calls import BoxMark, box_key

MIN_LONG_SIDE = 800
REGION_TINT = 0.45
"""How strongly a region's mask is tinted in its mark's colour."""
JPEG_QUALITY = 88
PLACEHOLDER_SIZE = (480, 320)

@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def text_color(fill: str) -> str:
    """Black or white, whichever reads better on `fill`."""
    red, green, blue = ImageColor.getrgb(fill)[:3]
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 150 else "white"


def load_picture(path: Path | None, size: tuple[int, int] | None) -> tuple[Image.Image, str | None]:
    """The image at `path` in RGB, or a placeholder and the reason it was needed."""
    if path is not None:
        try:
            with Image.open(path) as picture:
                return picture.convert("RGB"), None
        except OSError as exc:
            reason = f"cannot read {path}: {exc}"
    else:
        reason = "image not found"
    width, height = size if size and size[0] > 0 and size[1] > 0 else PLACEHOLDER_SIZE
    placeholder = Image.new("RGB", (int(width), int(height)), "#d9d9d9")
    draw = ImageDraw.Draw(placeholder)
    draw.text((10, 10), "image not available", fill="#555555", font=_font(14))
    return placeholder, reason


def tint_regions(picture: Image.Image, regions: Sequence[Region], marks: Sequence[BoxMark]) -> Image.Image:
    """A copy of `picture` with each region's mask tinted in the colour of its box's mark; masks
    of another size than the picture (a placeholder) are left out."""
    colors = {mark.box: mark.color for mark in marks}
    canvas = picture.copy()
    for region in regions:
        mask = region_mask(region)
        color = colors.get(box_key(region.box))
        if mask is None or color is None or mask.shape != (picture.height, picture.width):
            continue
        overlay = Image.new("RGB", canvas.size, ImageColor.getrgb(color)[:3])
        alpha = Image.fromarray((mask * int(255 * REGION_TINT)).astype("uint8"), mode="L")
        canvas.paste(overlay, (0, 0), alpha)
    return canvas


def draw_marks(picture: Image.Image, marks: Sequence[BoxMark]) -> Image.Image:
    """A copy of `picture`, enlarged if small, with every box outlined in its mark's colour.

    The labels are not drawn here: the page sets them beside the boxes in text of a readable size
    whatever the picture's shown width (see `pictures`)."""
    scale = upscale(picture.size)
    canvas = picture.resize((picture.width * scale, picture.height * scale), Image.Resampling.LANCZOS) \
        if scale > 1 else picture.copy()
    draw = ImageDraw.Draw(canvas)
    width = max(2, scale + 1, round(max(canvas.size) / 400))
    for mark in marks:
        x0, y0, x1, y1 = (v * scale for v in mark.box)
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        draw.rectangle((x0, y0, x1, y1), outline=mark.color, width=width)
    return canvas


def upscale(size: tuple[int, int]) -> int:
    """How much a picture is enlarged before drawing (small CLEVR pictures twice, at most 3 times)."""
    return min(max(1, -(-MIN_LONG_SIDE // max(size))), 3)  # ceiling division


def encode_jpeg(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    return buffer.getvalue()


def data_uri(payload: bytes, mime: str) -> str:
    """Inline a file in the HTML, for a report that is a single file."""
    return f"data:{mime};base64," + base64.b64encode(payload).decode("ascii")
