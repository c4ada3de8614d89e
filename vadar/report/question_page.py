"""The page `vadar solve --html FILE` writes: one question's entry, as in a run report.

It is a single file (the picture inlined), since it answers one ad-hoc query with no run
directory around it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from base_modules.types import Region
from vadar.report.data_lookup import DataLookup
from vadar.report.library import Library, functions_called, functions_from_export
from vadar.report.questions import inline_sink, question_view
from vadar.report.render import render


def _plain(value: Any) -> Any:
    """Module calls as `results.jsonl` records them: dataclasses as dicts, odd values as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return json.loads(json.dumps(value, default=str))


def outcome_row(question: str, outcome: Any, *, image_id: str, gold: Any = None) -> dict[str, Any]:
    """A `results.jsonl`-shaped row for an unscored `ProgramOutcome`."""
    return {
        "question_id": image_id, "question": question, "answer_type": "", "gold": gold,
        "answer": _plain(outcome.answer), "score": 0.0, "program": outcome.program, "error": outcome.error,
        "attempts": outcome.attempts, "prompt_tokens": outcome.cost.prompt_tokens,
        "completion_tokens": outcome.cost.completion_tokens,
        "cached_prompt_tokens": outcome.cost.cached_prompt_tokens, "seconds": outcome.seconds,
        "image_id": image_id, "module_calls": [_plain(call) for call in outcome.calls],
        "step_errors": [str(e) for e in getattr(outcome, "errors", [])],
    }


def question_page(*, question: str, image: Path, outcome: Any, functions: Sequence[Any] = (),
                  frames: Sequence[tuple[str, Path]] = (), regions: Sequence[Region] = ()) -> str:
    """The single-question page for `outcome` (a `ProgramOutcome`), as one self-contained HTML text.

    `functions` are the library's `FunctionRecord`s; the ones the program called are shown.
    `frames`, (frame id, file) of a question about several frames, are all shown, each with the
    boxes of the calls made on it. `regions`, those the question points at, are drawn as a run
    report draws a data set's regions (mask tinted, box labelled with the identifier).
    """
    row = outcome_row(question, outcome, image_id=image.stem)
    if len(frames) > 1:
        row["view_ids"] = [frame_id for frame_id, _ in frames]
    records = [f.to_dict() if hasattr(f, "to_dict") else dict(f) for f in functions]
    called = set(functions_called(outcome.program, [r["name"] for r in records]))
    library = Library("library", functions_from_export(r for r in records if r["name"] in called))
    view = question_view(row, DataLookup(None), inline_sink(), library=library.anchors(), image_path=image,
                         frame_paths=[path for _, path in frames], regions=regions)
    problems = [view.image_note] if view.image_note else []
    return render("question.html.j2", q=view, library=library, problems=problems)


def write_question_page(path: Path, *, question: str, image: Path, outcome: Any,
                        functions: Sequence[Any] = (),
                        frames: Sequence[tuple[str, Path]] = (), regions: Sequence[Region] = ()) -> Path:
    """Write the single-question page of `question_page` to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(question_page(question=question, image=image, outcome=outcome, functions=functions,
                                  frames=frames, regions=regions), encoding="utf-8")
    return path
