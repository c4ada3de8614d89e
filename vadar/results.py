"""Per-question results as JSONL, written one durable line at a time so a crash loses nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


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


class ResultsFile:
    """Append-only JSONL. Reading skips a torn last line left by a crash mid-write."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[QuestionResult]:
        return list(self._iter())

    def answered_ids(self) -> set[str]:
        return {r.question_id for r in self._iter()}

    def append(self, result: QuestionResult) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(asdict(result), default=str, ensure_ascii=False)
        with self.path.open("a+b") as handle:
            if handle.tell() > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    handle.write(b"\n")  # close a torn line so this record stays parseable
            handle.write((line + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def _iter(self) -> Iterator[QuestionResult]:
        if not self.path.exists():
            return
        seen: dict[str, QuestionResult] = {}
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn line from an interrupted write; the question is redone
                seen[data["question_id"]] = QuestionResult(**data)
        yield from seen.values()
