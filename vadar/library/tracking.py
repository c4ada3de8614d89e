"""Keep checking a helper after admission: how the programs that call it fare in evaluations.

Admission sees a handful of build questions; evaluations see hundreds. After each vadar
evaluation, every library function gets an `evaluated` decision with the run's figures: programs
that called it, their score, and (given a run of a method without the library on the same
questions, e.g. static-api) that run's score on the same questions. A function called by at
least `min_uses` programs that scored lower than the baseline on the same questions is retired:
it leaves the prompts, its versions and decisions stay in history
(`vadar.library.retirement`, with every helper that calls it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from api_store import ApiStore
from vadar.library.retirement import retire_helpers
from vadar.programs.calls import helpers_called


class ResultLike(Protocol):
    question_id: str
    program: str | None
    score: float


@dataclass(frozen=True)
class HelperUse:
    name: str
    uses: int
    score: float
    baseline_score: float | None  # the baseline run's score on the same questions

    @property
    def worse(self) -> bool:
        return self.baseline_score is not None and self.score < self.baseline_score

    def to_dict(self) -> dict[str, Any]:
        return {"uses": self.uses, "score": round(self.score, 3),
                "baseline_score": None if self.baseline_score is None else round(self.baseline_score, 3)}


def helper_uses(results: Iterable[ResultLike], names: Sequence[str],
                baseline: Mapping[str, ResultLike] | None = None) -> dict[str, HelperUse]:
    """Per function name: the programs of `results` that call it and how they scored."""
    found: dict[str, list[ResultLike]] = {name: [] for name in names}
    for result in results:
        for name in helpers_called(result.program, names):
            found[name].append(result)
    uses = {}
    for name, using in found.items():
        if not using:
            continue
        paired = [r for r in using if baseline is not None and r.question_id in baseline]
        base = sum(baseline[r.question_id].score for r in paired) if baseline is not None and paired else None
        score = sum(r.score for r in paired) if baseline is not None and paired else sum(r.score for r in using)
        uses[name] = HelperUse(name, len(paired) if paired else len(using), score, base)
    return uses


def track_evaluation(store: ApiStore, results: Sequence[ResultLike], *, run: str,
                     baseline: Mapping[str, ResultLike] | None = None, min_uses: int = 4) -> dict[str, str]:
    """Record each admitted function's figures in this run; retire those that did worse. Returns retirements."""
    library = store.library()
    worse, evidence = {}, {}
    for name, use in helper_uses(results, [f.name for f in library], baseline).items():
        evidence[name] = {"run": run, **use.to_dict()}
        store.record_decision(name, "evaluated", mode="evaluation", evidence=evidence[name])
        if use.worse and use.uses >= min_uses:
            worse[name] = (f"in {run}, the {use.uses} programs calling it scored {use.score:g}, "
                           f"the same questions without the library {use.baseline_score:g}")
    return retire_helpers(store, worse, mode="evaluation", evidence=evidence)
