"""Turn recorded module calls into what the report shows: a call table and labelled boxes.

A box is drawn once however many calls touched it (returned by `loc`, then measured by `depth`),
with one label line per call, so the picture says which call saw which object. Identical calls
(a helper measuring the same reference inside a loop) are folded into one row with a count.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

from base_modules.types import Region
from vadar.programs.answers import as_float

PALETTE = (
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324",
    "#808000", "#000075", "#bfef45", "#ffe119",
)
MAX_LABEL_LINES = 3

Box = tuple[float, float, float, float]


@dataclass
class BoxMark:
    """One distinct box on the image, its colour and the calls that returned or used it."""

    box: Box
    color: str
    labels: list[str] = field(default_factory=list)

    def add(self, label: str) -> None:
        if label not in self.labels:
            self.labels.append(label)

    @property
    def shown_labels(self) -> list[str]:
        """At most `MAX_LABEL_LINES` lines, the last one saying how many were left out."""
        if len(self.labels) <= MAX_LABEL_LINES:
            return list(self.labels)
        return self.labels[: MAX_LABEL_LINES - 1] + [f"+{len(self.labels) - MAX_LABEL_LINES + 1} more"]


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


def fmt_value(value: Any, *, digits: int = 3) -> str:
    """Short, readable text for an argument or result: rounded numbers, boxes to one decimal."""
    if is_image(value):
        return "image"
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
        return "{" + ", ".join(f"{k}: {fmt_value(v)}" for k, v in list(value.items())[:6]) + "}"
    return str(value)


def box_key(box: Any) -> Box:
    """A box as the marks key it: rounded to a tenth of a pixel."""
    return tuple(round(float(v), 1) for v in box)  # type: ignore[return-value]


def _text_args(call: dict[str, Any]) -> list[str]:
    """The non-image, non-box arguments (prompts, questions) as short text."""
    values = list(call.get("args") or []) + list((call.get("kwargs") or {}).values())
    return [fmt_value(v) for v in values if not is_image(v) and not is_box(v)]


def _box_args(call: dict[str, Any]) -> list[Box]:
    values = list(call.get("args") or []) + list((call.get("kwargs") or {}).values())
    return [box_key(v) for v in values if is_box(v)]


def _returned_boxes(result: Any) -> list[Box]:
    if is_box(result):
        return [box_key(result)]
    if isinstance(result, (list, tuple)):
        return [box_key(v) for v in result if is_box(v)]
    return []


def _arguments(call: dict[str, Any]) -> str:
    parts = [fmt_value(v) for v in call.get("args") or [] if not is_image(v)]
    parts += [f"{k}={fmt_value(v)}" for k, v in (call.get("kwargs") or {}).items()]
    return ", ".join(parts)


def _signature(call: dict[str, Any]) -> str:
    return json.dumps([call.get("name"), call.get("args"), call.get("kwargs"), call.get("result"),
                       call.get("error")], sort_keys=True, default=str)


def trace_calls(raw_calls: list[Any]) -> CallTrace:
    """Fold the recorded calls into table rows and give every distinct box a colour and labels."""
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

    marks: dict[Box, BoxMark] = {}

    def mark(box: Box, label: str) -> str:
        if box not in marks:
            marks[box] = BoxMark(box, PALETTE[len(marks) % len(PALETTE)])
        marks[box].add(label)
        return marks[box].color

    views = []
    for index, (call, count) in enumerate(folded, start=1):
        name = str(call.get("name", "?"))
        error = call.get("error")
        result = call.get("result")
        text = ", ".join(_text_args(call))
        colors: list[str] = []
        returned = [] if error else _returned_boxes(result)
        if returned and name == "loc":
            for position, box in enumerate(returned):
                colors.append(mark(box, f"{name}({text})[{position}]"))
        elif returned and name == "region":  # one box, named by the call itself
            colors.append(mark(returned[0], f"{name}({text})"))
        elif returned:
            for position, box in enumerate(returned):
                colors.append(mark(box, f"{name}({text}) -> [{position}]"))
        for box in _box_args(call):
            outcome = "error" if error else fmt_value(result)
            prefix = f"{name}({text})" if text else name
            colors.append(mark(box, f"{prefix} = {outcome}"))
        views.append(CallView(index, name, _arguments(call), "" if error else fmt_value(result),
                              str(error) if error else None, count, list(dict.fromkeys(colors))))
    return CallTrace(views, list(marks.values()))


def add_region_marks(marks: list[BoxMark], regions: Sequence[Region]) -> list[BoxMark]:
    """The marks with each question region's box labelled by its identifier ("<pallet_0>"),
    first on a box the calls already marked (region(k) returns it), else as a mark of its own."""
    out = list(marks)
    by_box = {mark.box: mark for mark in out}
    for region in regions:
        box = box_key(region.box)
        if box not in by_box:
            by_box[box] = BoxMark(box, PALETTE[len(out) % len(PALETTE)])
            out.append(by_box[box])
        by_box[box].labels.insert(0, region.name)
    return out
