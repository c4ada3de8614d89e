"""What a build spent, stage by stage: LLM requests and model seconds, per build question.

A build on the embedded model is paid in generated tokens, and most of them are programs: the
gate's (with and without the batch's candidates), a search's (one per question a helper may
serve), the question-shape route's and the validation gate's. Each stage of `runs.build` runs
inside a usage scope (`llm.usage.usage_scope`), so the session's tracker can say where the time
went; `build_cost.json` in the build directory keeps it, and the build prints one line. Each batch
runs inside a scope of its own too (`batch_scope`), so the file also says what each batch cost:
whether a long build's later batches, whose steps are mostly covered, still pay as much as its first.
Requests replayed from the response cache (a resumed build) count as requests, not as seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vadar.library.admission import GATE_PROGRAMS
from vadar.library.outcome_check import SEARCH_PROGRAMS
from vadar.llm.usage import UsageTotals, UsageTracker

COST_FILE = "build_cost.json"

PROPOSALS = "proposals"  # the Signature agent, the API agent (every sample of a search) and the gate
SHAPES = "question shapes"  # the question-shape route: its proposals, searches and gate
DISTILLATION = "distillation"
VALIDATION = "validation"
BUILD_STAGES = (PROPOSALS, SHAPES, DISTILLATION, VALIDATION)
BATCH_SCOPE = "batch "
# inside those: the programs a search by outcome writes, and the gate's (with and without the candidates)
PROGRAM_SCOPES = (SEARCH_PROGRAMS, GATE_PROGRAMS)


@dataclass(frozen=True)
class StageCost:
    """One stage's requests: `fresh` the endpoint answered in this run, `seconds` their model time."""

    stage: str
    requests: int
    fresh: int
    seconds: float
    completion_tokens: int

    @classmethod
    def of(cls, stage: str, totals: UsageTotals) -> StageCost:
        return cls(stage, totals.calls, totals.calls - totals.cache_hits, round(totals.latency_s, 1),
                   totals.completion_tokens)


@dataclass(frozen=True)
class BuildCost:
    """A build's cost: the whole run, each stage, and the program scopes inside them."""

    questions: int
    total: StageCost
    stages: tuple[StageCost, ...]
    batches: tuple[StageCost, ...] = ()  # each batch built in this run ("batch 3"), in order

    @property
    def seconds_per_question(self) -> float | None:
        return round(self.total.seconds / self.questions, 1) if self.questions else None

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "seconds_per_question": self.seconds_per_question,
                "total": vars(self.total), "stages": [vars(stage) for stage in self.stages],
                "batches": [vars(batch) for batch in self.batches]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BuildCost:
        return cls(int(data["questions"]), StageCost(**data["total"]),
                   tuple(StageCost(**stage) for stage in data["stages"]),
                   tuple(StageCost(**batch) for batch in data.get("batches", ())))

    def line(self) -> str:
        """One line for the build's printout: model seconds per build question, then by stage."""
        parts = ", ".join(f"{s.stage} {s.seconds:.0f} s ({s.requests} requests)" for s in self.stages if s.requests)
        per = f"{self.seconds_per_question:.0f} s per build question" if self.questions else "no question built"
        return f"model time {self.total.seconds:.0f} s, {per}" + (f": {parts}" if parts else "")


def batch_scope(index: int) -> str:
    """The usage scope of the batch at `index` (0-based), named as the build's printout counts it."""
    return f"{BATCH_SCOPE}{index + 1}"


def build_cost(usage: UsageTracker, questions: int, stages: Sequence[str] = (*BUILD_STAGES, *PROGRAM_SCOPES)) -> BuildCost:
    """The cost recorded by `usage` so far, for a build of `questions` questions."""
    batches = [scope for scope in usage.scopes() if scope.startswith(BATCH_SCOPE)]
    return BuildCost(questions, StageCost.of("build", usage.totals()),
                     tuple(StageCost.of(stage, usage.totals(stage)) for stage in stages),
                     tuple(StageCost.of(batch, usage.totals(batch)) for batch in batches))
