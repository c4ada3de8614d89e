"""The Program agent: programs over the whole API, run in the sandbox, inside the configured techniques.

The plain writer (`techniques.writer`) writes, runs and repairs one program; each reasoning
technique that `[reasoning]` turns on wraps it (`techniques.compose`, in one documented order).
The question is parsed once (`QuestionForm`) and every technique reads that form.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from vadar.agents.techniques.compose import compose
from vadar.agents.techniques.task import Task
from vadar.agents.techniques.writer import PlainWriter, opening_messages, size_priors_block, system_prompt
from vadar.agents.unit_tests import TestScenes
from vadar.config import ReasoningConfig
from vadar.llm.chat import ChatModel
from vadar.programs.outcome import Executor, ProgramOutcome, program_error
from vadar.programs.question_form import parse_question
from vadar.programs.sampling import PROGRAM, Sampling

__all__ = ["ProgramAgent", "opening_messages", "program_error", "size_priors_block", "system_prompt"]


class ProgramAgent:
    """Writes, runs and repairs programs for a question, with the reasoning techniques configured."""

    def __init__(self, llm: ChatModel, executor: Executor, *, max_attempts: int = 5,
                 sampling: Sampling = PROGRAM, same_error_limit: int | None = None,
                 reasoning: ReasoningConfig | None = None, check_answers: bool = True) -> None:
        self.reasoning = reasoning or ReasoningConfig()
        self.writer = PlainWriter(llm, executor, max_attempts=max_attempts, sampling=sampling,
                                  same_error_limit=same_error_limit, check_answers=check_answers,
                                  sample_temperature=self.reasoning.sample_temperature)

    def solve(self, question: str, api_text: str, namespace: Mapping[str, Any],
              examples: str | None = None, test_scenes: TestScenes | None = None, *,
              accept: Callable[[ProgramOutcome], bool] | None = None, tries: int = 1) -> ProgramOutcome:
        """`test_scenes`: the data set's kind of test scene and its oracle modules (needed by `reasoning.tests`).

        With `accept` (a labelled build: is this program's answer right?), up to `tries` programs are
        written, the greedy one first and then sampled ones, until one is accepted; the answer is that
        program's, else the greedy one's, and the cost is all of them."""
        started = time.perf_counter()
        writer = compose(self.reasoning, self.writer, accept=accept, tries=tries)
        outcome = writer.write(Task(parse_question(question), api_text, namespace, examples, test_scenes))
        outcome.seconds = time.perf_counter() - started
        return outcome
