"""The one interface every question executor offers to `run_questions`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from omni3d_bench.types import Question
from vadar.programs.outcome import InfrastructureFailure, ProgramOutcome
from vadar.llm.errors import LLMBadResponseError, LLMEmptyResponseError, LLMUnavailableError
from vadar.text import one_line

Solver = Callable[[Question], ProgramOutcome]


class QuestionExecutor(Protocol):
    """Answers questions and hands each back once, as it completes.

    `answer` yields `(question, outcome)` in completion order, each question of `todo` at most
    once; an error that should stop the evaluation is raised from the iterator, after which the
    executor starts no new question. Closing the iterator early (Ctrl-C) abandons what is in
    flight: those questions are answered again on resume.
    """

    def answer(self, todo: Sequence[Question]) -> Iterator[tuple[Question, ProgramOutcome]]: ...


class QuestionsLostError(RuntimeError):
    """Questions whose workers kept dying; the rest were answered and a rerun retries these."""


OUTAGES = (LLMUnavailableError, LLMBadResponseError, LLMEmptyResponseError, InfrastructureFailure)
"""Failures of the endpoint or the sandbox (after the client's retries), not of a program."""


def outage_outcome(exc: BaseException) -> ProgramOutcome:
    """The question's infrastructure error for an outage (`--keep-going`): a rerun asks it again."""
    return ProgramOutcome(error=f"infrastructure error: {one_line(str(exc), 600)}", infrastructure=True)
