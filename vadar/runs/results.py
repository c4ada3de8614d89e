"""Per-question results as JSONL, written one durable line at a time so a crash loses nothing."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, BinaryIO

from vadar.agents.techniques.records import read_techniques
from vadar.programs.records import TechniqueRecords
from vadar.runs.storage import StorageError, writing
from vadar.text import bounded_repr, clip

MAX_LINE_BYTES = 1024 * 1024
"""Largest `results.jsonl` line; a bigger record has its long fields cut (and says so)."""

MAX_FIELD_CHARS = 20_000
MAX_CALLS_KEPT = 50


@dataclass
class QuestionResult:
    """One answered question, as written to `results.jsonl`."""

    question_id: str
    question: str
    answer_type: str
    gold: Any
    answer: Any
    score: float
    correct: bool
    program: str | None
    error: str | None
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    seconds: float
    image_id: str
    method: str = "vadar"
    module_calls: list[Any] = field(default_factory=list)
    step_errors: list[str] = field(default_factory=list)  # what the LLM was told along the way
    techniques: TechniqueRecords = field(default_factory=TechniqueRecords)  # what reasoning techniques recorded
    infrastructure_error: bool = False  # an outage, not an answer: a rerun asks the question again
    view_ids: list[str] = field(default_factory=list)  # the frames of a multi-view question
    answer_given: Any = None  # the program's own answer where scoring read it otherwise (a region's number)


class ResultsFile:
    """Append-only JSONL. Reading skips a torn last line left by a crash mid-write."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[QuestionResult]:
        return list(self._iter())

    def answered_ids(self) -> set[str]:
        """Questions with an answer; one recorded as an infrastructure error is asked again."""
        return {r.question_id for r in self._iter() if not r.infrastructure_error}

    def append(self, result: QuestionResult) -> None:
        """Add one whole line, durably. A line that cannot be written whole (a full disk) is
        cut back off before `StorageError` is raised, and a torn last line left by a kill is
        removed first, so the file only ever holds whole lines."""
        line = (encode_line(result_record(result)) + "\n").encode("utf-8")
        with writing(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as handle:
                start = _drop_torn_line(handle)
                try:
                    handle.write(line)
                    handle.flush()
                    os.fsync(handle.fileno())
                except OSError:
                    handle.truncate(start)
                    raise

    def rows(self) -> list[dict[str, Any]]:
        """The raw records, the last one per question id, in first-answered order.

        Readers of runs made by other versions (reports) take these and treat fields as optional;
        a torn last line from a crash mid-write is skipped (that question is redone on resume).
        """
        return [data for _, data in self._numbered_rows()]

    def _numbered_rows(self) -> list[tuple[int, dict[str, Any]]]:
        if not self.path.exists():
            return []
        seen: dict[str, tuple[int, dict[str, Any]]] = {}
        with writing(self.path, "read"), self.path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except (ValueError, RecursionError):  # a torn line, or a number Python will not read
                    continue
                if isinstance(data, dict) and "question_id" in data:
                    seen[str(data["question_id"])] = (number, data)
        return list(seen.values())

    def _iter(self) -> Iterator[QuestionResult]:
        for number, data in self._numbered_rows():
            problem = record_problem(data)
            if problem is not None:
                raise ResultsFileError(f"{self.path}, line {number}: {problem}; fix or remove that line "
                                       "(a rerun answers a removed question again)")
            yield question_result(data)


def result_record(result: QuestionResult) -> dict[str, Any]:
    """The JSON object of one results line: the techniques' records each under its own key, and the
    fields that are rarely set only when set."""
    record = asdict(dataclasses.replace(result, techniques=TechniqueRecords()))
    record["techniques"] = result.techniques.to_json()
    if record["answer_given"] is None:
        del record["answer_given"]  # set only where the scored answer is not the one given
    if not record["infrastructure_error"]:
        del record["infrastructure_error"]  # lines stay as they were unless it is set
    if not record["view_ids"]:
        del record["view_ids"]  # single-image lines stay as they were
    return record


def question_result(row: Mapping[str, Any]) -> QuestionResult:
    """One results line as a `QuestionResult`, whichever version wrote it: a line from before the
    technique records keeps them, and the answer given, as flat fields of `extra`."""
    fields = {name: value for name, value in row.items() if name not in ("extra", "techniques", "answer_given")}
    extra = row.get("extra")
    given = row.get("answer_given", extra.get("answer_given") if isinstance(extra, Mapping) else None)
    return QuestionResult(**fields, techniques=read_techniques(row), answer_given=given)


class ResultsFileError(StorageError):
    """A line of `results.jsonl` is not a result record (a field missing, unknown or of the wrong type)."""


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "question_id": (str, int), "question": (str,), "answer_type": (str,), "score": (int, float),
    "correct": (bool,), "program": (str, type(None)), "error": (str, type(None)), "attempts": (int,),
    "prompt_tokens": (int,), "completion_tokens": (int,), "cached_prompt_tokens": (int,),
    "seconds": (int, float), "image_id": (str,), "method": (str,), "module_calls": (list,),
    "step_errors": (list,), "extra": (dict,), "techniques": (dict,), "infrastructure_error": (bool,),
    "view_ids": (list,),
}
_REQUIRED = tuple(f.name for f in fields(QuestionResult) if f.default is MISSING and f.default_factory is MISSING)


def record_problem(data: dict[str, Any]) -> str | None:
    """Why `data` is not a `QuestionResult` record, or None: a required field missing, a field no
    version writes, or a value of the wrong type (a score written as text)."""
    missing = [name for name in _REQUIRED if name not in data]
    if missing:
        return f"the record lacks {', '.join(repr(m) for m in missing)}"
    unknown = [str(key) for key in data if key not in _FIELD_TYPES and key not in ("gold", "answer", "answer_given")]
    if unknown:
        return f"the record has the unknown field(s) {', '.join(repr(u[:40]) for u in unknown[:3])}"
    for name, types in _FIELD_TYPES.items():
        value = data.get(name)
        if name not in data or (isinstance(value, types) and not (isinstance(value, bool) and bool not in types)):
            continue
        return f"its {name!r} is {clip(repr(value), 60)}, not {' or '.join(t.__name__ for t in types)}"
    return None


def _drop_torn_line(handle: BinaryIO) -> int:
    """Cut the file back to its last newline (a kill mid-write leaves a partial line); return
    the size it has then, where the next line starts."""
    end = handle.seek(0, os.SEEK_END)
    if end == 0:
        return 0
    handle.seek(end - 1)
    if handle.read(1) == b"\n":
        return end
    position = end
    while position > 0:
        step = min(65536, position)
        handle.seek(position - step)
        block = handle.read(step)
        newline = block.rfind(b"\n")
        if newline >= 0:
            position = position - step + newline + 1
            break
        position -= step
    handle.truncate(position)
    handle.seek(position)
    return position


def _dumps(record: dict[str, Any]) -> str:
    """JSON text that is always valid UTF-8: lone surrogates fall back to `\\uXXXX` escapes."""
    line = json.dumps(record, default=str, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, default=str)
    return line


def encode_line(record: dict[str, Any]) -> str:
    """One JSONL line for `record`, at most `MAX_LINE_BYTES`: long texts are cut, the module
    call log and a huge answer are summarised, so one bad question cannot write a huge line."""
    line = _dumps(record)
    if len(line.encode("utf-8", "backslashreplace")) <= MAX_LINE_BYTES:
        return line
    fitted = dict(record)
    for key in ("program", "error", "question"):
        if isinstance(fitted.get(key), str):
            fitted[key] = clip(fitted[key], MAX_FIELD_CHARS)
    fitted["step_errors"] = [clip(str(e), MAX_FIELD_CHARS // 4) for e in fitted.get("step_errors") or []]
    calls = list(fitted.get("module_calls") or [])
    fitted["module_calls"] = [bounded_repr(c, 500) for c in calls[:MAX_CALLS_KEPT]]
    if len(calls) > MAX_CALLS_KEPT:
        fitted["module_calls"].append(f"... {len(calls) - MAX_CALLS_KEPT} more calls not kept")
    for key in ("answer", "gold"):
        if len(_dumps({key: fitted.get(key)})) > MAX_FIELD_CHARS:
            fitted[key] = bounded_repr(fitted[key], MAX_FIELD_CHARS)
    line = _dumps(fitted)
    if len(line.encode("utf-8", "backslashreplace")) > MAX_LINE_BYTES:  # pathological: keep the essentials
        fitted["module_calls"], fitted["step_errors"] = ["not kept: the record was too large"], []
        line = _dumps(fitted)
    return line
