"""Revise once: a working program whose answer a review objects to is sent back with the reason.

Dspy's `Refine` feeds a hint into the next try; here the revision request is the next step of the
program's own conversation (`PlainWriter.revise`), so it keeps the repair limit and the temperature
schedule. Reviews run in order and the first objection counts: the answer against the constraint's
type (formalize, `ConstraintFit`), or the reflect step's checks, which include that one
(`Reflection`); then the first failing test scene (unit tests, `SceneCheck`). A revised program that
fails leaves the answer before the revision.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from vadar import prompts
from vadar.agents.reflect import Reflector
from vadar.agents.techniques.task import Task
from vadar.agents.techniques.writer import PlainWriter
from vadar.programs.outcome import ProgramOutcome


class Review(Protocol):
    """Why a working program's answer should be revised, or None."""

    def __call__(self, task: Task, outcome: ProgramOutcome) -> str | None: ...


@dataclass
class RevisionRecord:
    """The reasons a revision was asked for (at most one per program); stored under "revision"."""

    key: ClassVar[str] = "revision"

    revisions: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"revisions": list(self.revisions)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RevisionRecord:
        return cls(list(data.get("revisions") or []))

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> RevisionRecord | None:
        """The record in a results line written before the records (`revisions`)."""
        revisions = extra.get("revisions")
        return cls(list(revisions)) if revisions else None


class Reflection:
    """The reflect step: the question's form, plausible ranges, the size priors, a program that looked
    at nothing, the constraint's type, then (with a constraint) one LLM check against it."""

    def __init__(self, reflector: Reflector) -> None:
        self.reflector = reflector

    def __call__(self, task: Task, outcome: ProgramOutcome) -> str | None:
        return self.reflector.review(task.question, outcome.program or "", outcome.answer, task.constraint,
                                     outcome.cost, task.priors, looked=bool(outcome.calls))


class Revise:
    """Around the plain writer: the reviews of a working program, and one revision when one objects."""

    def __init__(self, inner: PlainWriter, reviews: Sequence[Review]) -> None:
        self.inner, self.reviews = inner, list(reviews)

    def write(self, task: Task) -> ProgramOutcome:
        draft = self.inner.draft(task)
        outcome = draft.outcome
        issue = None if outcome.failed else self._objection(task, outcome)
        if issue is None:
            return self.inner.finish(draft)
        kept = dataclasses.replace(outcome, calls=list(outcome.calls))
        outcome.techniques.put(RevisionRecord([issue]))
        self.inner.revise(draft, prompts.render("answer_revise", reason=issue))
        if outcome.failed:  # the revision broke it: keep the answer before
            outcome.answer, outcome.program, outcome.error = kept.answer, kept.program, None
            outcome.stdout, outcome.calls = kept.stdout, kept.calls
        return self.inner.finish(draft)

    def _objection(self, task: Task, outcome: ProgramOutcome) -> str | None:
        for review in self.reviews:
            issue = review(task, outcome)
            if issue is not None:
                return issue
        return None
