"""Formalize first (GCA): the task constraint is asked before any program, shown with the question,
and the answer is checked against its answer type. The constraint itself is `vadar.agents.formalize`.
"""

from __future__ import annotations

from vadar.agents.formalize import Formalizer, type_issue
from vadar.agents.techniques.task import ProgramWriter, Task
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.step_loop import LLMCost


class Formalize:
    """The constraint first (recorded as a `FormalizeRecord`), then the inner writer bound by it."""

    def __init__(self, inner: ProgramWriter, formalizer: Formalizer) -> None:
        self.inner, self.formalizer = inner, formalizer

    def write(self, task: Task) -> ProgramOutcome:
        cost = LLMCost()
        record = self.formalizer.formalize(task.question, cost)
        outcome = self.inner.write(task.but(constraint=record.constraint))
        outcome.techniques.put(record)
        outcome.cost.include(cost)
        return outcome


class ConstraintFit:
    """A review: the answer must be of the constraint's answer type (a number for a yes/no constraint is not)."""

    def __call__(self, task: Task, outcome: ProgramOutcome) -> str | None:
        return None if task.constraint is None else type_issue(outcome.answer, task.constraint.answer_type)
