"""The one interface every question executor offers to `run_questions`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from omni3d_bench.types import Question
from vadar.agents.outcome import ProgramOutcome

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
