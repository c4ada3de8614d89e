"""Turn recorded module calls into what the report shows: a call table and labelled boxes.

A box is drawn once however many calls touched it (returned by `loc`, then measured by `depth`),
with one label line per call, so the picture says which call saw which object. Identical calls
(a helper measuring the same reference inside a loop) are folded into one row with a count.

Over several frames, a box belongs to the frame the call names for it: a returned box to the
call's first frame, a box argument to the frame argument before it (`same_object_across(views[0],
b1, views[3], b2)` marks b1 on frame 0 and b2 on frame 3). Colours are given across all frames at
once, so a box has the colour of its call's swatch in the table on whichever frame it is drawn,
and no two boxes of a question share one (`colors`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

from base_modules.types import Region
from vadar.programs.answers import as_float
from vadar.report.colors import box_color

Box = tuple[float, float, float, float]


@dataclass
class BoxMark:
    """One distinct box on one frame (0 for a single image), its colour and the calls that
    returned or used it."""

    box: Box
    color: str
    labels: list[str] = field(default_factory=list)
    frame: int = 0

    def add(self, label: str) -> None:
        if label not in self.labels:
            self.labels.append(label)


@dataclass
class CallView:
    """One row of the call table: `loc("red cube")` -> `2 boxes`, with the boxes' colours."""

    index: int
    name: str
    arguments: str
    result: str
    error: str | None
    count: int
    colors: list[str] = field(default_factory=list)
    frames: str = ""  # the frames the call names ("0", "0, 3", "all"); empty for a single image


@dataclass
class CallTrace:
    calls: list[CallView]
    marks: list[BoxMark]


def is_box(value: Any) -> bool:
    """Four finite numbers: a list holding `10**400` or NaN is shown as a list, never drawn."""
    return (isinstance(value, (list, tuple)) and len(value) == 4
            and all((number := as_float(v)) is not None and math.isfinite(number) for v in value))


def is_image(value: Any) -> bool:
    return isinstance(value, dict) and "image_id" in value


def is_frames(value: Any) -> bool:
    """A list of frames (`views`), recorded as image handles or, when long, as their summary text."""
    if isinstance(value, list):
        return bool(value) and all(is_image(v) for v in value)
    return isinstance(value, str) and value.startswith("<list of ") and "Image(" in value


def _is_matrix(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) >= 2
            and all(isinstance(row, (list, tuple)) and len(row) == len(value[0]) >= 2
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row) for row in value))


def fmt_value(value: Any, *, digits: int = 3, nested: bool = False) -> str:
    """Short, readable text for an argument or result: rounded numbers, boxes to one decimal.

    Inside a dict (`nested`), a list of equal numeric rows is a matrix (`camera_pose`'s 4×4
    `world_to_camera`), not a list of boxes."""
    if is_image(value):
        return "image"
    if is_frames(value):
        return "views"
    if nested and _is_matrix(value):
        return f"{len(value)}×{len(value[0])} matrix"
    if is_box(value):
        return "[" + ", ".join(f"{float(v):.1f}" for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e4 else f"{value:.0f}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        if value and all(is_box(v) for v in value):
            return f"{len(value)} box{'es' if len(value) != 1 else ''}"
        inner = ", ".join(fmt_value(v, digits=digits) for v in value[:6])
        more = ", …" if len(value) > 6 else ""
        return f"[{inner}{more}]" if isinstance(value, list) else f"({inner}{more})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {fmt_value(v, digits=digits, nested=True)}"
                               for k, v in list(value.items())[:6]) + "}"
    return str(value)


def box_key(box: Any) -> Box:
    """A box as the marks key it: rounded to a tenth of a pixel."""
    return tuple(round(float(v), 1) for v in box)  # type: ignore[return-value]


def _values(call: dict[str, Any]) -> list[Any]:
    return list(call.get("args") or []) + list((call.get("kwargs") or {}).values())


def _text_args(call: dict[str, Any]) -> list[str]:
    """The non-image, non-box arguments (prompts, questions) as short text."""
    return [fmt_value(v) for v in _values(call) if not is_image(v) and not is_frames(v) and not is_box(v)]


class FrameIndex:
    """Which frame (0-based) an image handle of a call is, by its id; one image is frame 0."""

    def __init__(self, frame_ids: Sequence[str] = ()) -> None:
        self.positions = {str(frame_id): k for k, frame_id in enumerate(frame_ids)}

    @property
    def multi_view(self) -> bool:
        return len(self.positions) > 1

    def of(self, image: Any) -> int:
        return self.positions.get(str(image.get("image_id")), 0) if is_image(image) else 0

    def name(self, value: Any) -> str:
        """An image argument as the program named it: `views[k]` (or `image` for one image)."""
        if is_frames(value):
            return "views"
        return f"views[{self.of(value)}]" if self.multi_view else "image"


def _boxes_by_frame(call: dict[str, Any], frames: FrameIndex) -> tuple[int, list[tuple[int, Box]]]:
    """The call's first frame, and each box argument with the frame named before it (the first
    frame when none is)."""
    values = _values(call)
    first = next((frames.of(v) for v in values if is_image(v)), 0)
    current, boxes = first, []
    for value in values:
        if is_image(value):
            current = frames.of(value)
        elif is_box(value):
            boxes.append((current, box_key(value)))
    return first, boxes


def _frames_text(call: dict[str, Any], frames: FrameIndex) -> str:
    """The frames a call names, for the table: "all" for `views`, else their numbers in order."""
    if not frames.multi_view:
        return ""
    values = _values(call)
    if any(is_frames(v) for v in values):
        return "all"
    named = dict.fromkeys(frames.of(v) for v in values if is_image(v))
    return ", ".join(map(str, named))


def _returned_boxes(result: Any) -> list[Box]:
    if is_box(result):
        return [box_key(result)]
    if isinstance(result, (list, tuple)):
        return [box_key(v) for v in result if is_box(v)]
    return []


def _arguments(call: dict[str, Any], frames: FrameIndex) -> str:
    """The arguments as the table shows them; the one image of a single-image question is left
    out, frames of several are named (`views[2]`) since they say which frame a call looked at."""
    shown = frames.multi_view
    parts = [frames.name(v) if is_image(v) or is_frames(v) else fmt_value(v)
             for v in call.get("args") or [] if shown or not is_image(v)]
    parts += [f"{k}={frames.name(v) if is_image(v) or is_frames(v) else fmt_value(v)}"
              for k, v in (call.get("kwargs") or {}).items()]
    return ", ".join(parts)


def _signature(call: dict[str, Any]) -> str:
    return json.dumps([call.get("name"), call.get("args"), call.get("kwargs"), call.get("result"),
                       call.get("error")], sort_keys=True, default=str)


def _folded(raw_calls: list[Any]) -> list[tuple[dict[str, Any], int]]:
    """Identical calls as one, with how often they were made, in first-made order."""
    folded: list[tuple[dict[str, Any], int]] = []
    seen: dict[str, int] = {}
    for call in raw_calls:
        if not isinstance(call, dict):
            continue
        key = _signature(call)
        if key in seen:
            first, count = folded[seen[key]]
            folded[seen[key]] = (first, count + 1)
        else:
            seen[key] = len(folded)
            folded.append((call, 1))
    return folded


def trace_calls(raw_calls: list[Any], frame_ids: Sequence[str] = ()) -> CallTrace:
    """Fold the recorded calls into table rows and give every distinct box a colour and labels.

    `frame_ids`, the frames of a multi-view question in order, place each box on its frame."""
    frames = FrameIndex(frame_ids)
    marks: dict[tuple[int, Box], BoxMark] = {}

    def mark(frame: int, box: Box, label: str) -> str:
        if (frame, box) not in marks:
            marks[(frame, box)] = BoxMark(box, box_color(len(marks)), frame=frame)
        marks[(frame, box)].add(label)
        return marks[(frame, box)].color

    views = []
    for index, (call, count) in enumerate(_folded(raw_calls), start=1):
        name = str(call.get("name", "?"))
        error = call.get("error")
        result = call.get("result")
        text = ", ".join(_text_args(call))
        first, box_args = _boxes_by_frame(call, frames)
        colors: list[str] = []
        returned = [] if error else _returned_boxes(result)
        if returned and name == "loc":
            for position, box in enumerate(returned):
                colors.append(mark(first, box, f"{name}({text})[{position}]"))
        elif returned and name == "region":  # one box, named by the call itself
            colors.append(mark(first, returned[0], f"{name}({text})"))
        elif returned:
            for position, box in enumerate(returned):
                colors.append(mark(first, box, f"{name}({text}) -> [{position}]"))
        for frame, box in box_args:
            outcome = "error" if error else fmt_value(result)
            prefix = f"{name}({text})" if text else name
            colors.append(mark(frame, box, f"{prefix} = {outcome}"))
        views.append(CallView(index, name, _arguments(call, frames), "" if error else fmt_value(result),
                              str(error) if error else None, count, list(dict.fromkeys(colors)),
                              _frames_text(call, frames)))
    return CallTrace(views, list(marks.values()))


def add_region_marks(marks: list[BoxMark], regions: Sequence[Region]) -> list[BoxMark]:
    """The marks with each question region's box labelled by its identifier ("<pallet_0>"),
    first on a box the calls already marked (region(k) returns it), else as a mark of its own."""
    out = list(marks)
    by_box = {mark.box: mark for mark in out if mark.frame == 0}
    for region in regions:
        box = box_key(region.box)
        if box not in by_box:
            by_box[box] = BoxMark(box, box_color(len(out)))
            out.append(by_box[box])
        by_box[box].labels.insert(0, region.name)
    return out
