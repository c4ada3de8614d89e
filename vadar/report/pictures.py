"""The pictures of a question entry: each image or frame with its boxes, and the labels the page
sets beside them.

The boxes are drawn into the JPEG (so a saved picture still shows them) and overlaid again by the
page; the labels are page text of a fixed size, which the report's script places outside their
own box, away from other labels, with a leader line when they sit apart (`report.js`). Where no
such place is free, a label stays in the list under the picture. Each picture records its pixel
size for the `<img>` width and height, so the page keeps its layout while pictures load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from base_modules.types import Region
from vadar.report.calls import BoxMark
from vadar.report.data_lookup import DataLookup
from vadar.report.drawing import draw_marks, encode_jpeg, load_picture, text_color, tint_regions

ImageSink = Callable[[str, bytes], str]
"""Stores an encoded picture under a name and returns what an `<img src>` should say."""


@dataclass
class MarkView:
    """One box as the page overlays it: its place in percent of the picture, its colour, and its
    label lines, every one (the page shows the first with a count of the rest, all of them on
    hover, in `title`, and when the picture is opened large)."""

    left: float
    top: float
    width: float
    height: float
    color: str
    text_color: str
    labels: list[str]
    title: str


@dataclass
class Picture:
    """One picture of a question entry (its image, or one of its frames) and the boxes on it."""

    src: str
    width: int
    height: int
    marks: list[MarkView] = field(default_factory=list)
    caption: str = ""  # "frame 2: scene_00003_f02" for a frame of several
    frame: int = 0


def _percent(value: float, size: int) -> float:
    return round(min(max(value / size * 100.0, 0.0), 100.0), 3) if size else 0.0


def mark_views(marks: Sequence[BoxMark], size: tuple[int, int]) -> list[MarkView]:
    """The marks as the page places them over a picture of `size` (width, height) pixels."""
    width, height = size
    views = []
    for mark in marks:
        x0, x1 = sorted((float(mark.box[0]), float(mark.box[2])))
        y0, y1 = sorted((float(mark.box[1]), float(mark.box[3])))
        left, top = _percent(x0, width), _percent(y0, height)
        views.append(MarkView(left, top, round(_percent(x1, width) - left, 3), round(_percent(y1, height) - top, 3),
                              mark.color, text_color(mark.color), list(mark.labels), "\n".join(mark.labels)))
    return views


def picture(image: Image.Image, marks: Sequence[BoxMark], name: str, sink: ImageSink, *,
            regions: Sequence[Region] = (), caption: str = "", frame: int = 0) -> Picture:
    """Draw `marks` (and tint `regions`) on `image`, store it through `sink` as `name`."""
    drawn = draw_marks(tint_regions(image, regions, marks) if regions else image, marks)
    return Picture(sink(name, encode_jpeg(drawn)), drawn.width, drawn.height, mark_views(marks, image.size),
                   caption, frame)


def frame_pictures(row: Mapping[str, Any], frame_ids: Sequence[str], marks: Sequence[BoxMark],
                   lookup: DataLookup, sink: ImageSink, anchor: str,
                   paths: Sequence[Path] = ()) -> list[Picture]:
    """Every frame of a multi-view question, drawn with the boxes placed on it."""
    out = []
    for k, frame_id in enumerate(frame_ids):
        path = paths[k] if k < len(paths) else lookup.image_path({**row, "image_id": frame_id, "module_calls": []},
                                                                 frame=k)
        image, _ = load_picture(path, None)
        name = anchor if k == 0 else f"{anchor}-f{k}"
        out.append(picture(image, [m for m in marks if m.frame == k], name, sink,
                           caption=f"frame {k}: {frame_id}", frame=k))
    return out

