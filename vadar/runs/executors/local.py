"""The local executor: questions answered in this process, one at a time or on `jobs` threads."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence

from omni3d_bench.types import Question
from vadar.programs.outcome import ProgramOutcome
from vadar.runs.executors.base import Solver


class LocalExecutor:
    """`solver` on this machine, `jobs` questions at once (threads: their time goes into LLM
    requests and sandboxed programs, which overlap)."""

    def __init__(self, solver: Solver, jobs: int = 1) -> None:
        self.solver = solver
        self.jobs = jobs

    def answer(self, todo: Sequence[Question]) -> Iterator[tuple[Question, ProgramOutcome]]:
        if self.jobs <= 1 or len(todo) <= 1:
            for question in todo:
                yield question, self.solver(question)
            return
        yield from answer_concurrently(todo, self.solver, self.jobs)


def answer_concurrently(todo: Sequence[Question], solver: Solver,
                        jobs: int) -> Iterator[tuple[Question, ProgramOutcome]]:
    """Yield `(question, outcome)` as `jobs` daemon threads finish them.

    Daemon threads, so Ctrl-C (raised here, in the caller's thread) ends the command at once
    instead of waiting for requests in flight; their questions are simply answered again on
    resume. A solver exception stops the other workers from starting new questions and is
    re-raised here.
    """
    pending: queue.Queue[Question] = queue.Queue()
    for question in todo:
        pending.put(question)
    finished: queue.Queue[tuple[Question, ProgramOutcome | None, BaseException | None]] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                question = pending.get_nowait()
            except queue.Empty:
                return
            try:
                finished.put((question, solver(question), None))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                finished.put((question, None, exc))
                return

    for index in range(min(jobs, len(todo))):
        threading.Thread(target=work, name=f"vadar-question-{index}", daemon=True).start()
    try:
        for _ in range(len(todo)):
            while True:
                try:
                    question, outcome, error = finished.get(timeout=0.5)  # a timeout lets Ctrl-C in
                    break
                except queue.Empty:
                    continue
            if error is not None:
                raise error
            assert outcome is not None
            yield question, outcome
    finally:
        stop.set()
