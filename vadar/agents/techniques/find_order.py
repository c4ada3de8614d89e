"""Find order around the writer: the objects of the question's spatial relation chains, listed
innermost first after the question (`programs.relation_chain`), so a program transcribes the
order instead of working it out; a question without a chain is asked as it always was."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vadar.agents.techniques.task import ProgramWriter, Task
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.relation_chain import plan_text


@dataclass
class FindOrderRecord:
    """The numbered objects shown after the question; stored under "find_order"."""

    key: ClassVar[str] = "find_order"

    steps: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"steps": list(self.steps)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FindOrderRecord:
        return cls([str(step) for step in data.get("steps") or []])

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> FindOrderRecord | None:
        return None  # younger than the flat `extra` fields


class FindOrder:
    """The question's find order given to the inner writer, and recorded."""

    def __init__(self, inner: ProgramWriter) -> None:
        self.inner = inner

    def write(self, task: Task) -> ProgramOutcome:
        plan = plan_text(task.question.text)
        outcome = self.inner.write(task.but(find_order=plan) if plan else task)
        if plan:
            outcome.techniques.put(FindOrderRecord(plan.splitlines()))
        return outcome
