"""Answer a list of questions, score them, and write per-question JSONL plus a summary.

Resumable by construction: every answered question is appended durably to `results.jsonl` as
soon as it is answered, and a rerun skips the ids already there. Questions may be answered
several at once (`jobs` threads, or tasks on a Ray cluster); the file is then in completion order
and readers sort it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omni3d_bench.metrics import Summary, score_answer, summarize
from omni3d_bench.types import Question
from vadar.agents.outcome import ProgramOutcome
from vadar.agents.answers import ERROR_ANSWER
from vadar.runs.executors import LocalExecutor, QuestionExecutor
from vadar.runs.executors.base import Solver
from vadar.runs.progress import Progress
from vadar.runs.results import QuestionResult, ResultsFile

__all__ = ["EvalSummary", "Solver", "in_question_order", "run_questions", "summarize_results", "to_result",
           "write_summary"]


@dataclass
class EvalSummary:
    """Accuracy per answer type plus cost per question, and the questions that failed."""

    metrics: Summary
    questions: int
    failed: list[str] = field(default_factory=list)
    mean_seconds: float = 0.0
    mean_prompt_tokens: float = 0.0
    mean_completion_tokens: float = 0.0
    mean_cached_prompt_tokens: float = 0.0
    mean_llm_replies: float = 0.0
    header: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.header,
            "questions": self.questions,
            "accuracy": self.metrics.as_dict(),
            "failed_questions": self.failed,
            "mean_seconds_per_question": self.mean_seconds,
            "mean_prompt_tokens_per_question": self.mean_prompt_tokens,
            "mean_completion_tokens_per_question": self.mean_completion_tokens,
            "mean_cached_prompt_tokens_per_question": self.mean_cached_prompt_tokens,
            "mean_llm_replies_per_question": self.mean_llm_replies,
        }

    def to_markdown(self) -> str:
        lines = [f"# Evaluation summary: {self.header.get('name', 'run')}", ""]
        lines += [f"- {key}: {value}" for key, value in self.header.items()
                  if key != "name" and not isinstance(value, dict)]
        lines += [
            f"- questions: {self.questions}",
            f"- mean seconds per question: {self.mean_seconds:.2f}",
            f"- mean tokens per question: {self.mean_prompt_tokens:.0f} prompt "
            f"({self.mean_cached_prompt_tokens:.0f} served from the prefix cache), "
            f"{self.mean_completion_tokens:.0f} completion",
            f"- mean LLM replies per question: {self.mean_llm_replies:.2f}",
            "",
            self.metrics.to_markdown(),
            "",
        ]
        if self.failed:
            lines.append(f"Questions without a working program ({len(self.failed)}, counted wrong): "
                         + ", ".join(self.failed))
        return "\n".join(lines) + "\n"


def summarize_results(results: Sequence[QuestionResult], header: dict[str, Any] | None = None) -> EvalSummary:
    def mean(values: Iterable[float]) -> float:
        values = list(values)
        return statistics.fmean(values) if values else 0.0

    return EvalSummary(
        metrics=summarize((r.answer_type, r.score) for r in results),
        questions=len(results),
        failed=[r.question_id for r in results if r.error is not None],
        mean_seconds=mean(r.seconds for r in results),
        mean_prompt_tokens=mean(r.prompt_tokens for r in results),
        mean_completion_tokens=mean(r.completion_tokens for r in results),
        mean_cached_prompt_tokens=mean(r.cached_prompt_tokens for r in results),
        mean_llm_replies=mean(r.attempts for r in results),
        header=dict(header or {}),
    )


def to_result(question: Question, outcome: ProgramOutcome, *, method: str) -> QuestionResult:
    """Score one outcome. A failed program keeps the error marker as its answer and scores 0."""
    gold = question.answer
    if outcome.error is not None or gold is None:
        score = 0.0
    else:
        score = score_answer(outcome.answer, gold, question.answer_type, question.metric)
    return QuestionResult(
        question_id=question.question_id,
        question=question.question,
        answer_type=question.answer_type,
        gold=gold,
        answer=outcome.answer if outcome.error is None else ERROR_ANSWER,
        score=score,
        correct=score >= 1.0,
        program=outcome.program,
        error=outcome.error,
        attempts=outcome.attempts,
        prompt_tokens=outcome.cost.prompt_tokens,
        completion_tokens=outcome.cost.completion_tokens,
        cached_prompt_tokens=outcome.cost.cached_prompt_tokens,
        seconds=round(outcome.seconds, 3),
        image_id=question.image_id,
        method=method,
        module_calls=[_call_summary(c) for c in outcome.calls],
        step_errors=list(outcome.errors),
    )


def _call_summary(call: Any) -> Any:
    if hasattr(call, "__dataclass_fields__"):
        return {k: getattr(call, k) for k in call.__dataclass_fields__}
    return call


def run_questions(
    questions: Sequence[Question],
    solver: Solver | None,
    results: ResultsFile,
    *,
    method: str = "vadar",
    jobs: int = 1,
    progress: Progress | None = None,
    executor: QuestionExecutor | None = None,
) -> list[QuestionResult]:
    """Answer every question not yet in `results`; return all results for these questions, in order.

    `executor` answers them (default: `solver` on this machine, `jobs` questions at once on
    threads; or a Ray cluster, see `vadar.runs.executors`). Only this thread writes `results`, one
    durable line per question as it completes, so the file holds each question once, in
    completion order; a kill loses at most the questions still in flight.
    """
    progress = progress or Progress()
    done = results.answered_ids()
    todo = [q for q in questions if q.question_id not in done]
    progress.start_questions(len(questions), len(questions) - len(todo))
    if executor is None:
        if solver is None:
            raise ValueError("run_questions needs a solver or an executor")
        executor = LocalExecutor(solver, jobs)

    for question, outcome in executor.answer(todo):
        result = to_result(question, outcome, method=method)
        results.append(result)
        mark = "ok" if result.correct else ("error" if result.error else "wrong")
        progress.question_done(f"q{question.question_id}: {mark}")
    return in_question_order(results.read(), questions)


def in_question_order(results: Iterable[QuestionResult], questions: Sequence[Question]) -> list[QuestionResult]:
    """The results of `questions`, sorted as the questions are (results.jsonl is in completion order)."""
    by_id = {r.question_id: r for r in results}
    return [by_id[q.question_id] for q in questions if q.question_id in by_id]


def write_summary(summary: EvalSummary, out_dir: Path) -> tuple[Path, Path]:
    """Write `summary.json` and `summary.md` next to the results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "summary.json", out_dir / "summary.md"
    json_path.write_text(json.dumps(summary.as_dict(), indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(summary.to_markdown(), encoding="utf-8")
    return json_path, md_path
