"""The run summary: accuracy per answer type and per family, totals, time and tokens.

Scores are recomputed from the rows with the metrics module's own `summarize`, so the report
agrees with `summary.json` and still works for a run that stopped before writing one.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from omni3d_bench.metrics import summarize
from vadar.report.questions import NO_FAMILY, QuestionView
from vadar.report.run_files import RunFiles


@dataclass
class GroupRow:
    """Accuracy of one group of questions (an answer type or a family)."""

    name: str
    count: int
    accuracy: float
    correct: int
    wrong: int
    error: int


@dataclass
class RunSummaryView:
    header: list[tuple[str, str]]
    per_type: list[GroupRow]
    per_family: list[GroupRow]
    totals: list[tuple[str, str]]
    cost: list[tuple[str, str]]
    outcomes: dict[str, int] = field(default_factory=dict)


def group_rows(views: Sequence[QuestionView], key: Callable[[QuestionView], str]) -> list[GroupRow]:
    """One row per distinct key, in order of first appearance."""
    groups: dict[str, list[QuestionView]] = {}
    for view in views:
        groups.setdefault(key(view), []).append(view)
    return [
        GroupRow(name, len(members), statistics.fmean(v.score for v in members),
                 sum(v.outcome == "correct" for v in members), sum(v.outcome == "wrong" for v in members),
                 sum(v.outcome == "error" for v in members))
        for name, members in groups.items()
    ]


def _header(run: RunFiles) -> list[tuple[str, str]]:
    summary = run.summary
    items = [("run", run.name), ("method", run.method)]
    for key in ("model", "data", "split"):
        value = summary.get(key) or run.manifest.get(key)
        if value:
            items.append((key, str(value)))
    if run.modules:
        backends = set(run.modules.values())
        text = next(iter(backends)) if len(backends) == 1 else ", ".join(f"{k}={v}" for k, v in run.modules.items())
        items.append(("modules", text))
    if "library_functions" in summary:
        items.append(("library functions (used)",
                      f"{summary['library_functions']} ({summary.get('library_functions_used', 0)})"))
    if summary.get("techniques", "none") != "none":
        agreement = summary.get("mean_agreement")
        items.append(("reasoning techniques", str(summary["techniques"]) +
                      (f" (mean agreement {agreement:.2f})" if isinstance(agreement, int | float) else "")))
    limits = summary.get("agent_limits")
    if isinstance(limits, dict):
        items.append(("agent limits", ", ".join(f"{k}={v}" for k, v in limits.items())))
    return items


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def summarize_run(run: RunFiles, views: Sequence[QuestionView]) -> RunSummaryView:
    metrics = summarize((v.answer_type, v.score) for v in views)
    per_family = group_rows(views, lambda v: v.family)
    outcomes = {name: sum(v.outcome == name for v in views) for name in ("correct", "wrong", "error")}
    totals = [
        ("questions", str(len(views))),
        ("total (weighted by questions)", f"{metrics.total:.3f}"),
        ("mean over answer types (unweighted)", f"{metrics.mean_over_types:.3f}"),
    ]
    if len(per_family) > 1:
        totals.append(("mean over families (unweighted)", f"{_mean([r.accuracy for r in per_family]):.3f}"))
    totals.append(("correct / wrong / error", f"{outcomes['correct']} / {outcomes['wrong']} / {outcomes['error']}"))
    seconds = [v.seconds for v in views]
    cost = [
        ("seconds per question: mean / median / max",
         f"{_mean(seconds):.1f} / {statistics.median(seconds) if seconds else 0:.1f} / {max(seconds, default=0):.1f}"),
        ("total seconds", f"{sum(seconds):.0f}"),
        ("LLM replies per question", f"{_mean([v.attempts for v in views]):.2f}"),
        ("prompt tokens per question (from the prefix cache)",
         f"{_mean([v.prompt_tokens for v in views]):.0f} ({_mean([v.cached_prompt_tokens for v in views]):.0f})"),
        ("completion tokens per question", f"{_mean([v.completion_tokens for v in views]):.0f}"),
    ]
    per_type = group_rows(views, lambda v: v.answer_type)
    return RunSummaryView(_header(run), per_type, per_family if any(r.name != NO_FAMILY for r in per_family) else [],
                          totals, cost, outcomes)

