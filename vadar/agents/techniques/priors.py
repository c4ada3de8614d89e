"""Size priors (ViSRA) around the writer: the typical sizes of the objects the question names
(`QuestionForm.named_objects`, from `base_modules/size_priors.py`) are listed after the question, or
kept for the reflect step's range check only (`shown=False`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vadar.agents.techniques.task import ProgramWriter, Task
from vadar.programs.outcome import ProgramOutcome


@dataclass
class SizePriorsRecord:
    """The names of the priors found, and whether they served the check only (not shown); stored
    under "size_priors"."""

    key: ClassVar[str] = "size_priors"

    names: list[str] = field(default_factory=list)
    check_only: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"names": list(self.names), "check_only": self.check_only}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SizePriorsRecord:
        return cls([str(name) for name in data.get("names") or []], bool(data.get("check_only")))

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> SizePriorsRecord | None:
        """The record in a results line written before the records (`size_priors`, `size_priors_check_only`)."""
        names = extra.get("size_priors")
        return cls([str(name) for name in names], bool(extra.get("size_priors_check_only"))) if names else None


class SizePriors:
    """The question's priors given to the inner writer (shown, or for the checks only), and recorded."""

    def __init__(self, inner: ProgramWriter, shown: bool = True) -> None:
        self.inner, self.shown = inner, shown

    def write(self, task: Task) -> ProgramOutcome:
        priors = task.question.named_objects
        outcome = self.inner.write(task.but(priors=priors, shown_priors=priors if self.shown else ()))
        if priors:
            outcome.techniques.put(SizePriorsRecord([prior.name for prior in priors], check_only=not self.shown))
        return outcome
