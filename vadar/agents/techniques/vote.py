"""Vote over samples (MBR-exec): several programs per question, the plurality of their answers wins.

Dspy's `BestOfN` runs a module N times and keeps the best by a reward; here the reward is agreement.
Program 0 is the greedy one (the same request as without sampling), program k is drawn warmer with
seed k. Programs that could no longer change the answer are not written (`until_decided`), except
with unit tests: then only the working programs that pass the most tests vote, which any later
program can change. The comparison of answers is `vadar.agents.voting`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vadar.agents.techniques.revise import RevisionRecord
from vadar.agents.techniques.task import ProgramWriter, Task, merged
from vadar.agents.unit_tests import UnitTestRecord
from vadar.agents.voting import decided, plurality
from vadar.programs.outcome import ProgramOutcome


@dataclass
class SampleRecord:
    """One program of the vote: its answer, whether it failed, its revision and tests passed."""

    answer: Any
    error: bool
    revisions: list[str] = field(default_factory=list)
    tests_passed: int | None = None  # None: the question had no tests

    def to_json(self) -> dict[str, Any]:
        data = {"answer": self.answer, "error": self.error, "revisions": list(self.revisions)}
        return data if self.tests_passed is None else {**data, "tests_passed": self.tests_passed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleRecord:
        return cls(data.get("answer"), bool(data.get("error")), list(data.get("revisions") or []),
                   data.get("tests_passed"))

    @classmethod
    def of(cls, outcome: ProgramOutcome) -> SampleRecord:
        revision, tests = outcome.techniques.get(RevisionRecord), outcome.techniques.get(UnitTestRecord)
        return cls(outcome.answer, outcome.error is not None, list(revision.revisions) if revision else [],
                   tests.passed if tests else None)


@dataclass
class VoteRecord:
    """Every program of the vote, the one whose answer was chosen (None: none worked) and the share
    of the working programs that gave it; stored under "vote"."""

    key: ClassVar[str] = "vote"

    samples: list[SampleRecord] = field(default_factory=list)
    chosen_sample: int | None = None
    agreement: float = 0.0

    @property
    def working(self) -> int:
        return sum(1 for sample in self.samples if not sample.error)

    @property
    def agreeing(self) -> int:
        """How many working programs gave the chosen answer."""
        return round(self.agreement * self.working)

    def to_json(self) -> dict[str, Any]:
        return {"samples": [sample.to_json() for sample in self.samples], "chosen_sample": self.chosen_sample,
                "agreement": self.agreement}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VoteRecord:
        return cls([SampleRecord.from_json(s) for s in data.get("samples") or []], data.get("chosen_sample"),
                   float(data.get("agreement") or 0.0))

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> VoteRecord | None:
        """The record in a results line written before the records (`samples`, `chosen_sample`,
        `agreement` among the per-question fields)."""
        return cls.from_json(extra) if "samples" in extra else None


def _passed(outcome: ProgramOutcome) -> int:
    tests = outcome.techniques.get(UnitTestRecord)
    return tests.passed if tests is not None and tests.passed is not None else 0


class Vote:
    """`samples` programs (or fewer, once decided), answered by the plurality of the working ones."""

    def __init__(self, inner: ProgramWriter, samples: int, rel_tol: float, until_decided: bool = True) -> None:
        self.inner, self.samples, self.rel_tol, self.until_decided = inner, samples, rel_tol, until_decided

    def write(self, task: Task) -> ProgramOutcome:
        stop_early = self.until_decided and task.check is None  # tests change the voters with each program
        outcomes: list[ProgramOutcome] = []
        for sample in range(self.samples):
            outcomes.append(self.inner.write(task.but(sample=sample)))
            if (stop_early and sample + 1 < self.samples
                    and decided([o.answer for o in outcomes], [not o.failed for o in outcomes],
                                self.samples - sample - 1, self.rel_tol)):
                break
        return self._voted(outcomes)

    def _voted(self, outcomes: list[ProgramOutcome]) -> ProgramOutcome:
        """The plurality answer's first program, carrying the cost and errors of all of them. With unit
        tests, only the working programs that pass the most tests vote."""
        best = max((_passed(o) for o in outcomes if not o.failed), default=0)
        voters = [not o.failed and _passed(o) == best for o in outcomes]
        vote = plurality([o.answer for o in outcomes], voters, self.rel_tol)
        result = merged(outcomes[vote.winner if vote.winner is not None else 0], outcomes)
        result.techniques.put(VoteRecord([SampleRecord.of(o) for o in outcomes], vote.winner,
                                         round(vote.agreement, 4)))
        return result
