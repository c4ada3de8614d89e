"""The worker side of the Ray executor: one task answers one question.

A worker process keeps, per job, what answering needs (the answerer built from the shipped
library, the modules, a sandbox worker), so the job is fetched and deserialised once per process
rather than once per question. Tasks in one worker process run one at a time.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import os
import socket
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ray

from base_modules.module import ModuleSet
from omni3d_bench.types import Question
from vadar.programs.outcome import ProgramOutcome
from vadar.sandbox import SandboxPool
from vadar.runs.executors.job import QuestionJob
from vadar.runs.executors.module_server import served_module
from vadar.llm.chat import ChatModel, ChatRequest, ChatResponse
from vadar.llm.usage import CallRecord, UsageTracker
from vadar.runs.methods import Answerer, build_answerer
from vadar.runs.prepare import oracle_modules, view_modules

KEPT_JOBS = 8
"""Jobs whose runtime a worker process keeps (concurrent ablation configurations share workers)."""


@dataclass
class Answered:
    """What a task sends back: the outcome, its LLM calls (for the driver's usage) and where it ran."""

    outcome: ProgramOutcome
    usage: list[CallRecord] = field(default_factory=list)
    worker: str = ""


class _TaskUsage:
    """A chat model that accounts each response to the current task's tracker."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.tracker = UsageTracker()

    @property
    def reply_cap(self) -> int | None:
        return self.inner.reply_cap

    def complete(self, request: ChatRequest) -> ChatResponse:
        response = self.inner.complete(request)
        self.tracker.record(response)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class WorkerRuntime:
    """One job's answerer in this process, with its modules and its own sandbox worker."""

    def __init__(self, job: QuestionJob, servers: Mapping[str, Sequence[Any]]) -> None:
        limits = job.config.sandbox
        self.sandboxes = SandboxPool(timeout_s=limits.timeout_s, memory_mb=limits.memory_mb,
                                     max_stdout_chars=limits.max_stdout_chars)
        self.llm = _TaskUsage(job.llm_factory(job.config, job.base_url))
        executor = functools.partial(self.sandboxes.execute, timeout_s=limits.timeout_s,
                                     memory_mb=limits.memory_mb, max_stdout_chars=limits.max_stdout_chars)
        self.answerer: Answerer = build_answerer(
            job.method, job.library, llm=self.llm, executor=executor, config=job.config,
            dataset=job.dataset, modules=worker_modules(job, servers), backends=job.backends,
            view_modules=view_modules(job.dataset, job.backends))  # oracle twins read annotations

    def answer(self, question: Question) -> Answered:
        self.llm.tracker = UsageTracker()
        try:
            outcome = self.answerer(question)
        except BaseException:
            _call_if_present(self.llm.inner, "discard_pending")  # asked again when retried
            raise
        _call_if_present(self.llm.inner, "accept_pending")  # the question is answered: keep its replies
        return Answered(outcome, list(self.llm.tracker.records), f"{socket.gethostname()}:{os.getpid()}")

    def close(self) -> None:
        self.sandboxes.close()
        _call_if_present(self.llm.inner, "close")


def worker_modules(job: QuestionJob, servers: Mapping[str, Sequence[Any]]) -> ModuleSet:
    """Oracle slots built here (they only read annotations); every other slot calls its servers."""
    modules = oracle_modules(job.dataset)
    served = {slot: served_module(slot, servers[backend])
              for slot, backend in job.backends.items() if backend != "oracle"}
    return dataclasses.replace(modules, **served)


def _call_if_present(target: object, name: str) -> None:
    method = getattr(target, name, None)
    if callable(method):
        method()


_RUNTIMES: OrderedDict[str, WorkerRuntime] = OrderedDict()


def _runtime(job_id: str, boxed_job: Sequence[Any], servers: Mapping[str, Sequence[Any]]) -> WorkerRuntime:
    runtime = _RUNTIMES.get(job_id)
    if runtime is None:
        job: QuestionJob = ray.get(boxed_job[0])  # boxed, so Ray does not fetch it for every task
        runtime = _RUNTIMES[job_id] = WorkerRuntime(job, servers)
        while len(_RUNTIMES) > KEPT_JOBS:
            _RUNTIMES.popitem(last=False)[1].close()
    _RUNTIMES.move_to_end(job_id)
    return runtime


def answer_question(job_id: str, boxed_job: Sequence[Any], servers: Mapping[str, Sequence[Any]],
                    question: Question) -> Answered:
    """The Ray task: answer one question of job `job_id` (the job is `boxed_job[0]`, an ObjectRef)."""
    return _runtime(job_id, boxed_job, servers).answer(question)


@atexit.register
def _close_runtimes() -> None:
    while _RUNTIMES:
        _RUNTIMES.popitem()[1].close()
