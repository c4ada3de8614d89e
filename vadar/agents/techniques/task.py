"""What every program writer is given for one question, and the shape every technique shares.

A technique is a writer wrapping a writer (dspy's `BestOfN` and `Refine` are modules wrapping a
module): it may ask something first (a constraint, test scenes), hand its inner writer a task with
more in it, call it once or several times, and record what it did on the outcome it returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from base_modules.size_priors import SizePrior
from vadar.agents.formalize import Constraint
from vadar.agents.unit_tests import TestScenes, UnitCheck
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.question_form import QuestionForm
from vadar.programs.step_loop import LLMCost


@dataclass(frozen=True)
class Task:
    """One question to write a program for, with what the techniques around the writer added."""

    question: QuestionForm
    api_text: str
    namespace: Mapping[str, Any]
    examples: str | None = None  # the worked example(s) of the system prompt; None: the built-in one
    scenes: TestScenes | None = None  # the data set's kind of test scene, where the question can have tests
    sample: int = 0  # 0: the greedy program; k: drawn warmer with seed k
    constraint: Constraint | None = None  # formalize
    check: UnitCheck | None = None  # unit tests: the question's test scenes, ready to run programs on
    priors: tuple[SizePrior, ...] = ()  # size priors: the question's nouns' typical sizes, for the checks
    shown_priors: tuple[SizePrior, ...] = ()  # ... and those shown after the question
    find_order: str | None = None  # the objects of its relation chains, innermost first (`relation_chain`)

    def but(self, **changes: Any) -> Task:
        """This task with `changes` (a technique adding what it knows)."""
        return dataclasses.replace(self, **changes)


class ProgramWriter(Protocol):
    """Writes (and runs) a program for a task; a technique is one wrapping another."""

    def write(self, task: Task) -> ProgramOutcome: ...


def merged(chosen: ProgramOutcome, outcomes: Sequence[ProgramOutcome]) -> ProgramOutcome:
    """`chosen` as the answer of several programs written for one question: it carries the cost and
    the errors of all of them."""
    result = dataclasses.replace(chosen, cost=LLMCost(), errors=[e for o in outcomes for e in o.errors],
                                 techniques=chosen.techniques.copy(),
                                 checks_refused=sum(o.checks_refused for o in outcomes),
                                 answers_refused=sum(o.answers_refused for o in outcomes))
    for outcome in outcomes:
        result.cost.include(outcome.cost)
    return result
