"""The driver side of the Ray executor: every question a task, results handed back as they finish.

Ray does the scheduling (tasks on free CPUs anywhere in the cluster), the retries (a task whose
worker or node died runs again, `ray.max_retries` times) and the waiting (`ray.wait`). Each
question's result arrives here exactly once, however often it ran, and the caller writes it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError

from omni3d_bench.types import Question
from vadar.programs.outcome import ProgramOutcome
from vadar.config import RayConfig
from vadar.runs.executors.base import OUTAGES, QuestionsLostError, outage_outcome
from vadar.runs.executors.ray_worker import Answered, answer_question
from vadar.llm.usage import UsageTracker

_answer_task = ray.remote(answer_question)


class RayExecutor:
    """Answers one job's questions as Ray tasks; see `RayCluster.executor`."""

    def __init__(self, job_id: str, job_ref: Any, servers: Mapping[str, Sequence[Any]], settings: RayConfig,
                 usage: UsageTracker | None = None, *, keep_going: bool = False) -> None:
        self.job_id = job_id
        self.keep_going = keep_going  # an outage in a task is that question's infrastructure error
        self.job_ref = job_ref
        self.servers = dict(servers)
        self.settings = settings
        self.usage = usage
        self.workers: dict[str, str] = {}  # question id -> the worker that answered it

    def answer(self, todo: Sequence[Question]) -> Iterator[tuple[Question, ProgramOutcome]]:
        task = _answer_task.options(num_cpus=self.settings.task_cpus, max_retries=self.settings.max_retries,
                                    retry_exceptions=False)
        boxed = [self.job_ref]  # a list, so that workers fetch the job once each, not with every task
        questions = {task.remote(self.job_id, boxed, self.servers, question): question for question in todo}
        pending = list(questions)
        lost: list[str] = []
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)  # the timeout lets Ctrl-C in
                for ref in ready:
                    question = questions[ref]
                    try:
                        answered: Answered = ray.get(ref)
                    except RayTaskError as exc:  # the solver raised: stop, as the local executor does
                        if isinstance(exc.cause, OUTAGES):
                            if self.keep_going:  # recorded, asked again on the rerun
                                yield question, outage_outcome(exc.cause)
                                continue
                            raise exc.cause from None  # its own words, for the resume line
                        raise exc.as_instanceof_cause() from None
                    except RayError as exc:  # its workers died more often than max_retries
                        lost.append(f"{question.question_id} ({type(exc).__name__})")
                        continue
                    self._account(question, answered)
                    yield question, answered.outcome
        finally:
            for ref in pending:  # stopped early: nothing more starts, the rest is answered on resume
                ray.cancel(ref)
        if lost:
            raise QuestionsLostError(
                f"{len(lost)} question(s) lost their worker more than {self.settings.max_retries} times and were "
                f"not answered: {', '.join(lost)}; every other answer is saved, rerun to retry these")

    def _account(self, question: Question, answered: Answered) -> None:
        self.workers[question.question_id] = answered.worker
        if self.usage is not None:
            for record in answered.usage:
                self.usage.records.append(record)
