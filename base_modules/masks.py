"""Binary masks in COCO run-length encoding (RLE), and the few measures region tools take of them.

COCO RLE stores a mask of `size` [height, width] as run lengths over its pixels in column-major
(Fortran) order, starting with a run of zeros. `counts` is either that list of integers
("uncompressed") or a string ("compressed"): each run, minus the run two before it from the
third run on, in 5-bit groups, low bits first, each group + 48 as one character, bit 0x20 saying
another group follows and bit 0x10 of the last group the sign. This is the encoding of the COCO
API's `maskApi.c`; it is small enough to keep here instead of requiring the compiled package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np


class MaskError(ValueError):
    """An RLE record is malformed (wrong size, counts that do not add up, bad characters)."""


MAX_MASK_PIXELS = 50_000_000
"""Largest mask read (height x width): an 8K frame has 33 million pixels. A bigger one would take
gigabytes to decode (a 10000 x 10000 mask took 1.76 GB) and fits no image vadar reads."""

MAX_RUN_CHARS = 7
"""Characters of one run in a compressed string: 7 groups of 5 bits hold 34 billion, more than any
mask's pixels. An endless run would otherwise build an ever larger integer (quadratic time)."""


def counts_from_string(text: str | bytes) -> list[int]:
    """The run lengths of a compressed COCO RLE string."""
    try:
        data = text.encode("ascii") if isinstance(text, str) else bytes(text)
    except UnicodeEncodeError as exc:
        raise MaskError(f"compressed RLE string holds a character that is not ASCII at position {exc.start}") from None
    counts: list[int] = []
    pos = 0
    while pos < len(data):
        value, shift, more = 0, 0, True
        start = pos
        while more:
            if pos >= len(data):
                raise MaskError("compressed RLE string ends inside a run")
            if pos - start >= MAX_RUN_CHARS:
                raise MaskError(f"compressed RLE string holds a run longer than {MAX_RUN_CHARS} characters "
                                f"at position {start}")
            group = data[pos] - 48
            if not 0 <= group < 64:
                raise MaskError(f"compressed RLE string holds an invalid character {chr(data[pos])!r}")
            value |= (group & 0x1F) << shift
            more = bool(group & 0x20)
            pos += 1
            shift += 5
            if not more and group & 0x10:
                value |= -1 << shift
        if len(counts) > 2:
            value += counts[-2]
        counts.append(value)
    return counts


def counts_to_string(counts: Sequence[int]) -> str:
    """The compressed COCO RLE string of run lengths `counts`."""
    chars: list[str] = []
    for i, run in enumerate(counts):
        value = int(run) - (int(counts[i - 2]) if i > 2 else 0)
        more = True
        while more:
            group = value & 0x1F
            value >>= 5
            more = value != -1 if group & 0x10 else value != 0
            if more:
                group |= 0x20
            chars.append(chr(group + 48))
    return "".join(chars)


def _size(rle: Mapping[str, Any]) -> tuple[int, int]:
    size = rle.get("size") if isinstance(rle, Mapping) else None
    if (not isinstance(size, Sequence) or isinstance(size, (str, bytes)) or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)):
        raise MaskError(f"an RLE mask needs 'size': [height, width], got {short_repr(size)}")
    if size[0] * size[1] > MAX_MASK_PIXELS:
        raise MaskError(f"an RLE mask of {short_repr(size[0])} x {short_repr(size[1])} pixels is larger than the "
                        f"{MAX_MASK_PIXELS:,} pixels of any image read")
    return int(size[0]), int(size[1])


def short_repr(value: Any) -> str:
    """A value as an error message shows it: its repr, cut to 80 characters, or its type for an int too long to write."""
    try:
        text = repr(value)
    except ValueError:  # an int with more digits than Python writes out
        return f"a {type(value).__name__} too large to show"
    return text if len(text) <= 80 else text[:77] + "..."


def rle_counts(rle: Mapping[str, Any]) -> list[int]:
    """The run lengths of an RLE record in either form, checked against its size."""
    height, width = _size(rle)
    counts = rle.get("counts")
    if isinstance(counts, (str, bytes)):
        runs = counts_from_string(counts)
    elif isinstance(counts, Sequence) and all(isinstance(v, int) and not isinstance(v, bool) for v in counts):
        runs = [int(v) for v in counts]
    else:
        raise MaskError("an RLE mask needs 'counts': a compressed string or a list of run lengths")
    pixels = height * width
    if any(v < 0 or v > pixels for v in runs):
        raise MaskError(f"RLE run lengths must lie between 0 and {height} x {width} = {pixels} pixels")
    if sum(runs) != pixels:
        raise MaskError(f"RLE run lengths add up to {sum(runs)}, not {height} x {width} = {pixels} pixels")
    return runs


def decode_rle(rle: Mapping[str, Any]) -> np.ndarray:
    """The boolean mask (height, width) of a COCO RLE record, compressed or not."""
    height, width = _size(rle)
    runs = rle_counts(rle)
    values = np.arange(len(runs)) % 2 == 1
    flat = np.repeat(values, runs)
    return flat.reshape((width, height)).T.copy()


def encode_rle(mask: np.ndarray) -> dict[str, Any]:
    """The compressed COCO RLE record of a 2D boolean mask."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise MaskError(f"a mask must be 2D, got shape {mask.shape}")
    flat = mask.T.reshape(-1)
    changes = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    edges = np.concatenate([[0], changes, [flat.size]])
    runs = np.diff(edges).tolist()
    if flat.size and flat[0]:
        runs = [0, *runs]
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": counts_to_string(runs)}


def rle_box(size: Sequence[int], runs: Sequence[int]) -> tuple[float, float, float, float] | None:
    """`mask_box` of an RLE mask from its run lengths alone, without decoding it (cheap for the
    many full-HD masks of a data set); None if empty."""
    height = int(size[0])
    x_min = y_min = None
    x_max = y_max = -1
    position = 0
    for k, run in enumerate(runs):
        if k % 2 == 1 and run > 0:
            first, last = position, position + run - 1
            col0, col1 = first // height, last // height
            row0, row1 = (first % height, last % height) if col0 == col1 else (0, height - 1)
            x_min = col0 if x_min is None else min(x_min, col0)
            y_min = row0 if y_min is None else min(y_min, row0)
            x_max, y_max = max(x_max, col1), max(y_max, row1)
        position += run
    if x_min is None or y_min is None:
        return None
    return (float(x_min), float(y_min), float(x_max + 1), float(y_max + 1))


@lru_cache(maxsize=32)
def cached_mask(height: int, width: int, counts: str) -> np.ndarray:
    """Decoded masks of regions, kept since one question's tools look at the same few masks."""
    mask = decode_rle({"size": [height, width], "counts": counts})
    mask.setflags(write=False)
    return mask


def mask_box(mask: np.ndarray) -> tuple[float, float, float, float] | None:
    """Tight box [x_min, y_min, x_max, y_max] of a mask in pixel-edge coordinates; None if empty."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


def mask_centroid(mask: np.ndarray) -> tuple[float, float] | None:
    """Mean (x, y) of a mask's pixel centres; None if empty."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return (float(xs.mean()) + 0.5, float(ys.mean()) + 0.5)
