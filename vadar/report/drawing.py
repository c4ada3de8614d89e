"""Draw a question's boxes and labels onto its image with Pillow.

Small images (CLEVR and the built-in benchmark are 480x320) are enlarged before drawing so that
labels stay legible; the result is a JPEG, about a tenth of a PNG of the same picture, because a
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

Rect = tuple[float, float, float, float]


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def _text_color(fill: str) -> str:
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
    """A copy of `picture`, enlarged if small, with every box outlined and labelled."""
    scale = max(1, -(-MIN_LONG_SIDE // max(picture.size)))  # ceiling division
    scale = min(scale, 3)
    canvas = picture.resize((picture.width * scale, picture.height * scale), Image.Resampling.LANCZOS) \
        if scale > 1 else picture.copy()
    draw = ImageDraw.Draw(canvas)
    font = _font(11 * scale // 2 + 6)
    width = max(2, scale + 1)
    for mark in marks:
        x0, y0, x1, y1 = (v * scale for v in mark.box)
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        draw.rectangle((x0, y0, x1, y1), outline=mark.color, width=width)
    placed: list[Rect] = []
    for mark in marks:  # labels last, so no outline crosses a label
        _label(draw, mark, scale, font, placed)
    return canvas


def _overlaps(a: Rect, b: Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _label(draw: ImageDraw.ImageDraw, mark: BoxMark, scale: int, font: ImageFont.ImageFont,
           placed: list[Rect]) -> None:
    """Label a box above it, else inside its top, else below it: wherever no label is yet."""
    lines = mark.shown_labels
    if not lines:
        return
    text = "\n".join(lines)
    left, top, right, bottom = draw.multiline_textbbox((0, 0), text, font=font, spacing=2)
    text_w, text_h = right - left + 6, bottom - top + 4
    x0, x1 = sorted((mark.box[0] * scale, mark.box[2] * scale))
    y0, y1 = sorted((mark.box[1] * scale, mark.box[3] * scale))
    canvas_w, canvas_h = draw.im.size

    def at(y: float) -> Rect:
        x = min(max(0.0, x0), max(0.0, canvas_w - text_w))
        y = min(max(0.0, y), max(0.0, canvas_h - text_h))
        return (x, y, x + text_w, y + text_h)

    candidates = [at(y0 - text_h), at(y0 + 2), at(y1 + 2)]
    candidates += [at(y0 - text_h + step * text_h) for step in range(-3, 6)]
    rect = next((c for c in candidates if not any(_overlaps(c, p) for p in placed)), candidates[0])
    placed.append(rect)
    draw.rectangle(rect, fill=mark.color)
    draw.multiline_text((rect[0] + 3 - left, rect[1] + 2 - top), text, fill=_text_color(mark.color),
                        font=font, spacing=2)


def encode_jpeg(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    return buffer.getvalue()


def data_uri(payload: bytes, mime: str) -> str:
    """Inline a file in the HTML, for a report that is a single file."""
    return f"data:{mime};base64," + base64.b64encode(payload).decode("ascii")
