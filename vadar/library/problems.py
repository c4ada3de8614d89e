"""Why a helper is not admitted (yet), as typed problems: one text for the LLM, one for the log.

Every check of the admission gate (`vadar.library.gate`) returns one of these or nothing. The type,
not the wording, decides what happens next: whether the retry request says that answers changed,
whether a repair can fix it, which cases a repair is shown. The LLM's text never holds the right
answer of a build question (it must compute it, not copy it); the log's text may.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class Case:
    """One input the helper got wrong: where, what was expected, what it gave."""

    question: str
    expected: str
    got: str

    def to_dict(self) -> dict[str, str]:
        return {"question": self.question, "expected": self.expected, "got": self.got}


@dataclass(frozen=True)
class Problem:
    """A reason not to admit. `for_log` defaults to the LLM's text."""

    for_llm: str
    for_log: str = ""
    cases: tuple[Case, ...] = field(default=(), compare=False)

    answers_changed: ClassVar[bool] = False  # the retry request says that answers changed
    repairable: ClassVar[bool] = False  # a new implementation, shown the cases, may fix it

    @property
    def log(self) -> str:
        return self.for_log or self.for_llm

    def __str__(self) -> str:
        return self.log


class ReplyProblem(Problem):
    """The reply is not of the asked form (no code, no `def`, wrong number of calls)."""


class NameProblem(Problem):
    """The name is invalid, taken, the placeholder, or built from one use's values."""


class DocstringProblem(Problem):
    """The docstring is missing, names one use's value, or says nothing of a parameter."""


class SourceProblem(Problem):
    """The code breaks the rule for stored helpers (one plain `def`, constant defaults, ...)."""


class MisuseProblem(Problem):
    """The helper computes nothing with the API, or looks up the questions' own phrases."""


class CoverageProblem(Problem):
    """The helper is called for too few of the questions it was written for."""


class UnreadParameter(Problem):
    """The body never reads a parameter its signature promises."""


class AnswersChanged(Problem):
    """Programs rewritten to call the helper no longer give their right answers."""

    answers_changed = True
    repairable = True


class WrongOnFrame(Problem):
    """The helper is wrong on other build questions of the kind it was written for."""

    answers_changed = True
    repairable = True


class TruthFailed(Problem):
    """The helper contradicts ground truth on cases its name makes checkable."""

    repairable = True


class BehaviourFailed(Problem):
    """An assertion written from the helper's name and docstring fails on its body."""

    repairable = True


class NotBetter(Problem):
    """Programs using the helper are not right more often than programs without it."""

    repairable = True


class TooFewUses(Problem):
    """Too few programs used the helper to judge it: no repair can add uses."""


class Unused(Problem):
    """No program used the helper."""


class NoReference(Problem):
    """No reference answer to judge the programs that used it."""


class NotShorter(Problem):
    """Calling the helper does not shorten the programs it came from."""


class Duplicate(Problem):
    """The library already has a helper with this body: programs should call that one."""


class DependencyRejected(Problem):
    """It calls a helper that was not admitted."""


class NoName(Problem):
    """The LLM gave the helper no usable name."""
