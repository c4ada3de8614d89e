"""One report entry per answered question: outcome, picture, program, module calls, attempts."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from base_modules.types import Region

from vadar.agents.formalize import FormalizeRecord
from vadar.agents.techniques.priors import SizePriorsRecord
from vadar.agents.techniques.records import read_techniques
from vadar.agents.techniques.revise import RevisionRecord
from vadar.agents.techniques.vote import VoteRecord
from vadar.agents.unit_tests import UnitTestRecord
from vadar.programs.records import TechniqueRecords
from vadar.report.calls import CallView, add_region_marks, fmt_value, trace_calls
from vadar.report.data_lookup import DataLookup, recorded_image
from vadar.report.drawing import load_picture
from vadar.report.highlight import highlight_python
from vadar.report.library import functions_called
from vadar.report.pictures import ImageSink, Picture, frame_pictures, picture

OUTCOMES = ("correct", "wrong", "error")
"""Outcomes of a scored question; a question without a gold answer is `answered`."""
NO_FAMILY = "(none)"
NO_ID = "(no id)"
"""How a row that records no question id (`null`, empty) is named."""

@dataclass
class QuestionView:
    """Everything the template shows for one question; strings are escaped by the template."""

    question_id: str
    anchor: str
    question: str
    answer_type: str
    gold: str
    answer: str
    score: float
    outcome: str
    family: str
    program: Markup
    error: str | None
    step_errors: list[str]
    attempts: int
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    calls: list[CallView]
    boxes: int
    pictures: list[Picture]
    """The image with its boxes, or every frame of a multi-view question, each with its own."""
    image_note: str | None
    library_used: list[tuple[str, str]] = field(default_factory=list)
    techniques: list[str] = field(default_factory=list)  # constraint, votes, revisions, one line each

    @property
    def image_src(self) -> str:
        """The first picture, as its `<img src>` says."""
        return self.pictures[0].src

    @property
    def multi_view(self) -> bool:
        return len(self.pictures) > 1


def question_anchor(question_id: str) -> str:
    return "q-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(question_id))


def outcome_of(row: Mapping[str, Any]) -> str:
    """`error` (no working program), `correct`, `wrong`, or `answered` when there is no gold."""
    if row.get("error"):
        return "error"
    correct = row.get("correct")
    if correct is None:
        if row.get("gold") is None:
            return "answered"
        correct = _float(row.get("score")) >= 1.0
    return "correct" if correct else "wrong"


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _float(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _answer_text(value: Any) -> str:
    return value if isinstance(value, str) else fmt_value(value, digits=6)


def technique_lines(records: TechniqueRecords) -> list[str]:
    """What the reasoning techniques did for one question, as short lines (empty when none ran)."""
    lines = []
    formalized = records.get(FormalizeRecord)
    if formalized is not None:
        constraint = formalized.constraint
        if constraint is not None:
            lines.append(f"constraint: frame {constraint.reference_frame}; objects "
                         f"{', '.join(map(str, constraint.targets))}; relation {constraint.relation}; "
                         f"{constraint.quantity} ({constraint.unit}); answer {constraint.answer_type}")
        lines += [f"constraint refused: {reason}" for reason in formalized.refused]
        lines += [f"constraint corrected: {correction}" for correction in formalized.corrected]
    tests = records.get(UnitTestRecord)
    if tests is not None:
        written = len(tests.tests)
        passed = f"; the answer's program passed {tests.passed}" if tests.passed is not None else ""
        lines.append(f"unit tests: {written} scene{'s' if written != 1 else ''} written by the model{passed}")
    priors = records.get(SizePriorsRecord)
    if priors is not None and priors.names:
        how = "for the reflect check only" if priors.check_only else "shown"
        lines.append(f"size priors {how}: {', '.join(priors.names)}")
    revision = records.get(RevisionRecord)
    lines += [f"revision asked: {reason}" for reason in revision.revisions] if revision else []
    vote = records.get(VoteRecord)
    if vote is not None and vote.samples:
        answers = ", ".join("error" if s.error else _answer_text(s.answer) for s in vote.samples)
        lines.append(f"vote of {len(vote.samples)} programs ({answers}): agreement {vote.agreement:.2f}")
    return lines


def question_view(row: Mapping[str, Any], lookup: DataLookup, sink: ImageSink, *,
                  library: Mapping[str, str] | None = None, image_path: Path | None = None,
                  frame_paths: Sequence[Path] | None = None,
                  regions: Sequence[Region] | None = None) -> QuestionView:
    """Build one entry; `library` maps function names to anchors for linking.

    `image_path`, when given, is the picture to draw on instead of looking it up; `frame_paths`
    likewise for the frames of a multi-view question (its row's `view_ids`), and `regions` for
    the regions the question points at.
    """
    library = dict(library or {})
    recorded_id = row.get("question_id")
    question_id = NO_ID if recorded_id is None or str(recorded_id).strip() == "" else str(recorded_id)
    anchor = question_anchor(question_id)
    calls = list(row.get("module_calls") or [])
    frame_ids = [str(v) for v in row.get("view_ids") or []]
    trace = trace_calls(calls, frame_ids)
    recorded = recorded_image(calls)
    path = image_path if image_path is not None and image_path.is_file() else lookup.image_path(dict(row))
    size = (int(recorded["width"]), int(recorded["height"])) if recorded.get("width") else None
    image, note = load_picture(path, size)
    if note is not None:
        where = recorded.get("path") or row.get("image_id") or "?"
        note = f"image {where} not found; boxes drawn on a placeholder" if path is None else note
    regions = lookup.regions(question_id) if regions is None else tuple(regions)
    marks = add_region_marks(trace.marks, regions)
    pictures = frame_pictures(row, frame_ids, marks, lookup, sink, anchor, frame_paths or []) if len(frame_ids) > 1 \
        else [picture(image, marks, anchor, sink, regions=regions)]
    used = functions_called(row.get("program"), library)
    step_errors = [str(e) for e in row.get("step_errors") or []]
    return QuestionView(
        question_id=question_id, anchor=anchor, question=str(row.get("question", "")),
        answer_type=str(row.get("answer_type", "")), gold="—" if row.get("gold") is None else _answer_text(row.get("gold")),
        answer=_answer_text(row.get("answer")), score=_float(row.get("score")), outcome=outcome_of(row),
        family=lookup.family(question_id) or NO_FAMILY,
        program=highlight_python(row.get("program"), {n: library[n] for n in used}),
        error=str(row["error"]) if row.get("error") else None, step_errors=step_errors,
        attempts=_int(row.get("attempts")), seconds=_float(row.get("seconds")),
        prompt_tokens=_int(row.get("prompt_tokens")), completion_tokens=_int(row.get("completion_tokens")),
        cached_prompt_tokens=_int(row.get("cached_prompt_tokens")), calls=trace.calls,
        boxes=len(marks), pictures=pictures, image_note=note,
        library_used=[(name, library[name]) for name in used],
        techniques=technique_lines(read_techniques(row)),
    )


def question_views(rows: Sequence[Mapping[str, Any]], lookup: DataLookup, sink: ImageSink, *,
                   library: Mapping[str, str] | None = None) -> list[QuestionView]:
    return [question_view(row, lookup, sink, library=library) for row in rows]


def file_sink(out_dir: Path, folder: str = "images") -> ImageSink:
    """Write pictures beside the HTML (`images/<anchor>.jpg`) and link them relatively."""
    target = out_dir / folder
    target.mkdir(parents=True, exist_ok=True)

    def store(name: str, payload: bytes) -> str:
        (target / f"{name}.jpg").write_bytes(payload)
        return f"{folder}/{name}.jpg"

    return store


def inline_sink() -> ImageSink:
    """Embed pictures in the HTML as data URIs, for a report that is one file."""
    from vadar.report.drawing import data_uri

    return lambda name, payload: data_uri(payload, "image/jpeg")
