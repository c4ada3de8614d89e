"""Answer a list of questions, score them, and write per-question JSONL plus a summary.

Resumable by construction: every answered question is appended durably to `results.jsonl` as
soon as it is answered, and a rerun skips the ids already there. Questions may be answered
several at once (`jobs` threads, or tasks on a Ray cluster); the file is then in completion order
and readers sort it.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omni3d_bench.metrics import Summary, score_answer, summarize
from omni3d_bench.types import Question
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.answers import ERROR_ANSWER, region_number
from vadar.runs.executors import LocalExecutor, QuestionExecutor
from vadar.runs.executors.base import OUTAGES, Solver, outage_outcome
from vadar.runs.progress import Progress
from vadar.runs.results import QuestionResult, ResultsFile, encode_line, result_record
from vadar.runs.storage import write_text_atomically, writing
from vadar.text import invalid_unicode, one_line

__all__ = ["EvalSummary", "Solver", "in_question_order", "run_questions", "summarize_results", "to_result",
           "write_summary", "rescore", "rescore_run"]


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
    given = None
    if outcome.error is not None or gold is None:
        score = 0.0
    else:
        answer = region_number(outcome.answer, question.regions, question.answer_type)
        if answer is not outcome.answer:
            given = outcome.answer
            outcome = dataclasses.replace(outcome, answer=answer)
        score, error = _score(outcome.answer, gold, question.answer_type, question.metric)
        if error is not None:
            outcome = dataclasses.replace(outcome, error=error)
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
        techniques=outcome.techniques.copy(),
        infrastructure_error=outcome.infrastructure,
        view_ids=list(question.view_ids),
        answer_given=given,
    )


def _score(answer: Any, gold: Any, answer_type: str, metric: str | None) -> tuple[float, str | None]:
    """The score, or 0 and that question's error when the answer cannot be scored.

    A gold answer the metric refuses is the data set's fault and still raises.
    """
    try:
        return score_answer(answer, gold, answer_type, metric), None
    except Exception as exc:  # noqa: BLE001 - whatever the program returned, the run goes on
        score_answer(gold, gold, answer_type, metric)
        return 0.0, f"the answer could not be scored: {type(exc).__name__}: {one_line(str(exc), 300)}"


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
    keep_going: bool = False,
) -> list[QuestionResult]:
    """Answer every question not yet in `results`; return all results for these questions, in order.

    `executor` answers them (default: `solver` on this machine, `jobs` questions at once on
    threads; or a Ray cluster, see `vadar.runs.executors`). Only this thread writes `results`, one
    durable line per question as it completes, so the file holds each question once, in
    completion order; a kill loses at most the questions still in flight.

    An endpoint outage that outlasts the retries stops the run with `RunStoppedError`, which says
    how to resume; with `keep_going` that question is recorded as an
    infrastructure error instead (local answering and Ray tasks alike), the run goes on, and a rerun
    asks it again.
    """
    progress = progress or Progress()
    done = results.answered_ids()
    todo = [q for q in questions if q.question_id not in done]
    progress.start_questions(len(questions), len(questions) - len(todo))
    if executor is None:
        if solver is None:
            raise ValueError("run_questions needs a solver or an executor")
        executor = LocalExecutor(_outages_recorded(solver) if keep_going else solver, jobs)
    # a given executor records outages itself when keep-going is on (see `RayCluster.executor`)

    unreadable = [(q, problem) for q in todo if (problem := invalid_unicode(q.question)) is not None]
    for question, problem in unreadable:  # the LLM cannot be asked: that question's error
        _record(results, progress, to_result(question, ProgramOutcome(error=f"the question {problem}"),
                                             method=method))
    todo = [q for q in todo if invalid_unicode(q.question) is None]
    try:
        for question, outcome in executor.answer(todo):
            _record(results, progress, to_result(question, outcome, method=method))
    except OUTAGES as exc:
        answered = len(results.answered_ids() & {q.question_id for q in questions})
        raise RunStoppedError(
            f"{one_line(str(exc), 600)} -- the run stopped; {answered} of {len(questions)} questions are "
            f"answered and saved in {results.path}: rerun the same command to resume, or add --keep-going "
            "to record such questions as errors and go on") from exc
    return in_question_order(results.read(), questions)


class RunStoppedError(RuntimeError):
    """An outage stopped the run; the message says how to resume."""


def _outages_recorded(solver: Solver) -> Solver:
    """`solver`, with an outage turned into that question's infrastructure error."""

    def answer(question: Question) -> ProgramOutcome:
        try:
            return solver(question)
        except OUTAGES as exc:
            return outage_outcome(exc)

    return answer


def _record(results: ResultsFile, progress: Progress, result: QuestionResult) -> None:
    results.append(result)
    mark = "ok" if result.correct else ("error" if result.error else "wrong")
    progress.question_done(f"q{result.question_id}: {mark}")


def in_question_order(results: Iterable[QuestionResult], questions: Sequence[Question]) -> list[QuestionResult]:
    """The results of `questions`, sorted as the questions are (results.jsonl is in completion order)."""
    by_id = {r.question_id: r for r in results}
    return [by_id[q.question_id] for q in questions if q.question_id in by_id]


def write_summary(summary: EvalSummary, out_dir: Path) -> tuple[Path, Path]:
    """Write `summary.json` and `summary.md` next to the results."""
    json_path, md_path = out_dir / "summary.json", out_dir / "summary.md"
    with writing(out_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomically(json_path, json.dumps(summary.as_dict(), indent=2, default=str) + "\n")
    write_text_atomically(md_path, summary.to_markdown())
    return json_path, md_path


def rescore(results: Sequence[QuestionResult], questions: Sequence[Question]) -> list[QuestionResult]:
    """The results scored again under today's rules (answers naming a region, metrics), from the
    stored answers: no program runs again. Failed programs and unknown questions stay as they were."""
    by_id = {q.question_id: q for q in questions}
    again = []
    for result in results:
        question = by_id.get(result.question_id)
        if question is None or result.error is not None or question.answer is None:
            again.append(result)
            continue
        given = result.answer if result.answer_given is None else result.answer_given
        answer = region_number(given, question.regions, question.answer_type)
        score, error = _score(answer, question.answer, question.answer_type, question.metric)
        again.append(dataclasses.replace(result, answer=answer, score=score, correct=score >= 1.0, error=error,
                                         answer_given=None if answer is given else given))
    return again


_COMPUTED = ("questions", "accuracy", "failed_questions", "mean_seconds_per_question",
             "mean_prompt_tokens_per_question", "mean_completion_tokens_per_question",
             "mean_cached_prompt_tokens_per_question", "mean_llm_replies_per_question")


def rescore_run(out_dir: Path, questions: Sequence[Question]) -> tuple[EvalSummary, int]:
    """Rescore the run in `out_dir` in place (results.jsonl and its summary); returns the new summary
    and how many scores changed. The results file is replaced whole, atomically."""
    results = ResultsFile(out_dir / "results.jsonl").read()
    again = rescore(results, questions)
    changed = sum(1 for a, b in zip(results, again, strict=True) if a.score != b.score)
    lines = []
    for result in again:
        lines.append(encode_line(result_record(result)))
    write_text_atomically(out_dir / "results.jsonl", "".join(line + "\n" for line in lines))
    try:
        old = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {"name": out_dir.name}
    header = {k: v for k, v in old.items() if k not in _COMPUTED}
    summary = summarize_results(again, {**header, "rescored": True})
    write_summary(summary, out_dir)
    return summary, changed
