"""Unit tests (ViUniT) around the writer: the question's test scenes are written once, before any
program; each program is reviewed on them (the first failing scene asks for a revision) and counted
(how many it passes, which decides who votes). The scenes themselves are `vadar.agents.unit_tests`.
"""

from __future__ import annotations

import dataclasses

from vadar.agents.techniques.task import ProgramWriter, Task
from vadar.agents.unit_tests import TestWriter, UnitCheck, UnitTestRecord
from vadar.programs.outcome import Executor, ProgramOutcome
from vadar.programs.step_loop import LLMCost


class UnitTests:
    """The question's tests first, where its data set has test scenes; recorded as a `UnitTestRecord`
    with how many tests the answer's program passed."""

    def __init__(self, inner: ProgramWriter, writer: TestWriter, executor: Executor, rel_tol: float) -> None:
        self.inner, self.writer, self.executor, self.rel_tol = inner, writer, executor, rel_tol

    def write(self, task: Task) -> ProgramOutcome:
        if task.scenes is None:
            return self.inner.write(task)
        cost = LLMCost()
        written = self.writer.write(task.question.text, task.scenes.kind, cost)
        check = UnitCheck(written.tests, task.scenes, self.executor, self.rel_tol) if written.tests else None
        outcome = self.inner.write(task.but(check=check))
        counted = outcome.techniques.get(UnitTestRecord)
        outcome.techniques.put(dataclasses.replace(written, passed=counted.passed if counted else None))
        outcome.cost.include(cost)
        return outcome


class CountPassed:
    """Around one program: how many of the question's tests a working program passes."""

    def __init__(self, inner: ProgramWriter) -> None:
        self.inner = inner

    def write(self, task: Task) -> ProgramOutcome:
        outcome = self.inner.write(task)
        if task.check is not None and not outcome.failed and outcome.program is not None:
            outcome.techniques.put(UnitTestRecord(passed=task.check.passed(outcome.program)))
        return outcome


class SceneCheck:
    """A review: the first test scene the program fails, described for the model."""

    def __call__(self, task: Task, outcome: ProgramOutcome) -> str | None:
        if task.check is None or outcome.program is None:
            return None
        return task.check.failure(outcome.program)
