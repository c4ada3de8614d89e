"""Generate-and-test for helpers whose claim ground truth can decide.

A small code model is right far more often in k samples than in one (AlphaCode and CodeT keep
the samples their tests pass). Where a helper's name makes a claim the data set's ground truth
can check (the objects left of a box, an object's height in metres: `vadar.library.claims`), the
API agent samples up to `samples` working implementations, runs each on ground-truth cases and
keeps the first that passes them all. When none does, the closest one (fewest failing cases) is
shown its failing cases and sampled from again, up to `rounds` rounds. Each request says how the
data set's ground truth defines what the name claims (its conventions: left of as a smaller box
centre x, a height in metres from the box, depth and focal length): a small model's "left of"
otherwise compares depths, left edges, or whatever the docstring it was given suggests. What the search did is
kept as a `SearchRecord`: samples tried, which passed, the cases, the rounds.

A helper whose name claims nothing ground truth can check is searched the same way and judged by
outcome instead (`vadar.library.outcome_check`): the build questions' programs that call it, run with
each sample, scored against their gold answers. No sample is right on every question then as a rule,
so the search keeps the best sample (`SearchRule.keep_best`) when it is no worse than programs
without the helper, and records the figures as `OutcomeEvidence`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class SearchSettings:
    """`samples` = 1 is a single greedy implementation, exactly as without a search."""

    samples: int = 8
    rounds: int = 1  # `library.search_rounds`: a later round never kept a sample in 173 recorded searches
    temperature: float = 0.8
    seed: int = 0  # sample k (k >= 1) is drawn with seed + k: another value draws other samples of the same prompts

    @property
    def active(self) -> bool:
        return self.samples > 1


class CaseCheck(Protocol):
    """Ground-truth cases run on one implementation: `passed` None when no case could be made."""

    passed: bool | None
    cases: int
    failures: list[str]


class HelperVerifier(Protocol):
    """Decides, from ground truth, whether an implementation does what its name claims."""

    def claim(self, name: str, signature: str) -> str | None:
        """The checkable claim of a name and signature (e.g. `relation:left`), or None."""

    def convention(self, name: str, signature: str) -> str | None:
        """How the data set's ground truth defines what the name claims, in words, or None."""

    def verify(self, name: str, signature: str, docstring: str, code: str,
               dependencies: Sequence[str]) -> CaseCheck:
        """Run the implementation on the ground-truth cases its claim asks for."""


def fewest_failures(checked: CaseCheck) -> float:
    """Closeness of a ground-truth check: the fewer failing cases, the closer."""
    return -float(len(checked.failures))


def never(checked: CaseCheck) -> bool:
    """A failed sample is never kept: a ground-truth claim must hold on every case."""
    return False


@dataclass(frozen=True)
class SearchRule:
    """How samples that failed compare (`closeness`, higher is closer), whether the closest is kept
    when none passed (`keep_best`), and the template that shows it what went wrong."""

    closeness: Callable[[Any], float] = fewest_failures
    keep_best: Callable[[Any], bool] = never
    retry_template: str = "api_search_retry"


FIRST_PASS = SearchRule()
"""Ground truth: the first sample that passes every case is kept, none other."""


class ComparingVerifier(HelperVerifier, Protocol):
    """A verifier whose samples are compared and the best kept (`rule`), with its figures per helper."""

    rule: SearchRule

    def evidence(self, name: str) -> OutcomeEvidence | None:
        """What the samples of `name` were judged on, or None if nothing was judged."""


@dataclass(frozen=True)
class OutcomeEvidence:
    """A search judged by outcome: the build questions whose programs call the helper (`support`),
    the score of each sample judged (in order), and of programs without it; `minimum` support."""

    support: int
    minimum: int
    right_without: float = 0.0
    right: tuple[float, ...] = ()
    question_ids: tuple[str, ...] = ()
    asked: int = 0  # build questions a program was written for, to find the support
    weight: float | None = None  # the support as the gate weighs it (a yes/no question counts half)
    assumed: int = 0  # supporting questions no program without it was written for: counted right

    @property
    def weighed(self) -> float:
        return float(self.support) if self.weight is None else self.weight

    @property
    def searched(self) -> bool:
        return self.weighed >= self.minimum

    @property
    def weighing(self) -> str:
        """What the support weighs, said where yes/no questions made it less than their number."""
        return weighing_note(self.support, self.weighed)

    def to_dict(self) -> dict[str, Any]:
        return {"support": self.support, "minimum": self.minimum, "right_without": round(self.right_without, 4),
                "right": [round(r, 4) for r in self.right], "questions": list(self.question_ids),
                "asked": self.asked, "weight": self.weighed, "assumed": self.assumed}


def weighing_note(support: int, weight: float) -> str:
    """` (weighing 1.5: a yes/no question counts half)` where the weight is under the count, else ``."""
    return f" (weighing {weight:g}: a yes/no question counts half)" if weight < support else ""


@dataclass
class SearchRecord:
    """What one helper's search tried: `passed` lists the (1-based) samples that passed every case."""

    claim: str
    samples: int = 0
    working: int = 0
    passed: list[int] = field(default_factory=list)
    cases: int = 0
    rounds: int = 0
    closest_failures: list[str] = field(default_factory=list)
    kept: int | None = None  # the (1-based) sample kept, passing or best; None: none
    outcome: OutcomeEvidence | None = None  # judged by the build questions' gold answers

    @property
    def pass_rate(self) -> float:
        """Passing samples among those that ran (the search stops at the first that passes)."""
        return len(self.passed) / self.working if self.working else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "samples": self.samples, "working": self.working, "passed": self.passed,
                "pass_rate": round(self.pass_rate, 4), "cases": self.cases, "rounds": self.rounds,
                "closest_failures": self.closest_failures[:3], "kept": self.kept,
                **({"outcome": self.outcome.to_dict()} if self.outcome is not None else {})}


@dataclass(frozen=True)
class Sample:
    """One sampled implementation that ran on its test call (`code`), or why none did (`error`)."""

    code: str | None
    dependencies: tuple[str, ...] = ()
    error: str | None = None


@dataclass
class Found:
    """The search's outcome: the implementation kept (None: none passed) and its record."""

    sample: Sample | None
    record: SearchRecord
    closest: Sample | None = None


REPEATS_TO_STOP = 3
"""Samples in a row that repeat an implementation already judged before a round gives up."""

Sampler = Callable[[int, Sequence[str], str | None], Sample]
"""Draws sample `index` (0 is greedy), optionally shown a closest implementation and its failing cases."""


def search(sampler: Sampler, check: Callable[[Sample], CaseCheck], settings: SearchSettings, claim: str,
           on_event: Callable[[str], None] = lambda message: None, rule: SearchRule = FIRST_PASS) -> Found:
    """Sample, check, keep the first implementation that passes every case (else, where `rule`
    allows, the closest one).

    A sample whose cases cannot be built (`passed` None) is no evidence either way: it is kept as
    the single implementation would have been. A round ends early after `REPEATS_TO_STOP` samples
    in a row repeat a text already judged: the model's distribution has collapsed onto it (a small
    model copying its prompt's example drew the same body 16 times at temperature 0.8), and more
    draws of the same request only repeat it; the next round's request shows the closest failure.
    """
    record = SearchRecord(claim)
    closest: tuple[float, int, Sample, CaseCheck] | None = None  # closeness, sample number, sample, its check
    seen: set[str] = set()
    for round_index in range(settings.rounds):
        record.rounds = round_index + 1
        failures_shown = list(closest[3].failures) if closest is not None else []
        code_shown = closest[2].code if closest is not None else None
        repeats = 0
        for k in range(settings.samples):
            if repeats >= REPEATS_TO_STOP:
                on_event(f"round {round_index + 1} ended: {repeats} samples in a row repeated one already judged")
                break
            index = round_index * settings.samples + k
            on_event(f"sample {index + 1} of at most {settings.samples * settings.rounds}")
            sample = sampler(index, failures_shown, code_shown)
            record.samples += 1
            if sample.code is None:
                continue
            record.working += 1
            if sample.code in seen:  # the same text again: the same verdict
                repeats += 1
                continue
            repeats = 0
            seen.add(sample.code)
            checked = check(sample)
            record.cases = max(record.cases, checked.cases)
            if checked.passed is not False:
                if checked.passed:
                    record.passed.append(record.samples)
                record.kept = record.samples
                return Found(sample, record)
            closeness = rule.closeness(checked)
            if closest is None or closeness > closest[0]:
                closest = (closeness, record.samples, sample, checked)
                record.closest_failures = list(checked.failures)
    if closest is not None and rule.keep_best(closest[3]):
        record.kept = closest[1]
        return Found(closest[2], record)
    return Found(None, record, closest[2] if closest is not None else None)
