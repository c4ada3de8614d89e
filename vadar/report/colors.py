"""The colour of each box of a question: every box its own, however many there are.

The first twelve come from a palette of well-separated colours; after them, hues step by the
golden angle (each new hue falls in the widest gap left by the earlier ones) at lightnesses dark
enough to outline a box on a light picture and bright enough on a dark one. A candidate too close
to a colour already given is skipped, so no two boxes of a question share or nearly share a colour
and a call's swatch in the table always names one box.
"""

from __future__ import annotations

import colorsys
import math
from functools import cache

PALETTE = (
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324",
    "#808000", "#000075", "#bfef45", "#ffe119",
)
GOLDEN_ANGLE = 137.50776405003785
LIGHTNESS = (0.30, 0.62)
SATURATION = (0.65, 0.95)
MIN_DISTANCE = 70.0
"""The least RGB distance between two colours of a question while candidates still find room;
it shrinks by `SHRINK` each time `PATIENCE` candidates in a row are too close."""
PATIENCE = 32
LUMA = (50.0, 190.0)
SHRINK = 0.85


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def _readable(rgb: tuple[int, int, int]) -> bool:
    """Neither so dark that an outline vanishes on a dark picture nor so pale that it does on a
    light one (luma, 0-255)."""
    red, green, blue = rgb
    return LUMA[0] <= 0.299 * red + 0.587 * green + 0.114 * blue <= LUMA[1]


def _spread(step: int, ratio: float, bounds: tuple[float, float]) -> float:
    """A low-discrepancy walk over `bounds` (each step fills the widest gap left)."""
    low, high = bounds
    return low + (high - low) * (step * ratio % 1.0)


def _candidate(step: int) -> str:
    hue = (15.0 + step * GOLDEN_ANGLE) % 360.0 / 360.0
    lightness = _spread(step, math.sqrt(2), LIGHTNESS)
    saturation = _spread(step, math.sqrt(3), SATURATION)
    red, green, blue = colorsys.hls_to_rgb(hue, lightness, saturation)
    return "#" + "".join(f"{round(v * 255):02x}" for v in (red, green, blue))


@cache
def box_colors(count: int) -> tuple[str, ...]:
    """The colours of a question's first `count` boxes; each is a prefix of the next."""
    colors = list(PALETTE[:count])
    given = [_rgb(c) for c in colors]
    step, least, rejected = 0, MIN_DISTANCE, 0
    while len(colors) < count:
        candidate = _candidate(step)
        step += 1
        rgb = _rgb(candidate)
        if not _readable(rgb):
            continue
        if all(math.dist(rgb, other) >= least for other in given):
            colors.append(candidate)
            given.append(rgb)
            rejected = 0
        else:
            rejected += 1
            if rejected >= PATIENCE:
                least, rejected = least * SHRINK, 0
    return tuple(colors)


def box_color(index: int) -> str:
    """The colour of a question's box number `index` (0-based), from a sequence computed in
    doubling lengths (a prefix never changes)."""
    return box_colors(max(32, 1 << index.bit_length()))[index]
