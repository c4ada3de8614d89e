"""The Program agent: one program per question over the whole API, run in the sandbox.

The prompt puts the stable part first (rules, API text, worked example in the system message) and
the question last, so an OpenAI-compatible server with prefix caching reuses the shared prefix
across questions. A failing program is sent back with its error, up to `max_attempts` times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vadar import prompts
from vadar.answers import ERROR_ANSWER, normalize_answer
from vadar.agents.sampling import PROGRAM, Sampling, cut_off, cut_off_error
from vadar.code_extract import NoCodeError, extract_code
from vadar.llm.chat import ChatModel
from vadar.sandbox import ExecutionResult

Executor = Callable[[str, Mapping[str, Any]], ExecutionResult]
"""Runs a program with a namespace; `vadar.sandbox.execute` with limits bound."""

EXAMPLE_QUESTION = "How many red cubes are in front of the small sphere?"


class InfrastructureFailure(RuntimeError):
    """The sandbox itself failed (not the program): stop instead of blaming the LLM."""


@dataclass
class ProgramOutcome:
    """Everything we keep about answering one question."""

    answer: Any
    program: str | None
    error: str | None
    attempts: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    seconds: float = 0.0
    stdout: str = ""
    calls: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.error is not None


def system_prompt(api_text: str) -> str:
    """The stable, cacheable prefix shared by every question of a run."""
    return prompts.render(
        "program_system",
        api=api_text.strip(),
        example_question=EXAMPLE_QUESTION,
        example_program=prompts.render("program_example").strip(),
    )


class ProgramAgent:
    """Writes, runs and repairs one program per question."""

    def __init__(self, llm: ChatModel, executor: Executor, *, max_attempts: int = 5,
                 sampling: Sampling = PROGRAM) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.llm = llm
        self.executor = executor
        self.max_attempts = max_attempts
        self.sampling = sampling

    def solve(self, question: str, api_text: str, namespace: Mapping[str, Any]) -> ProgramOutcome:
        started = time.perf_counter()
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system_prompt(api_text)},
            {"role": "user", "content": prompts.render("program_question", question=question)},
        ]
        outcome = ProgramOutcome(answer=ERROR_ANSWER, program=None, error=None, attempts=0)
        for attempt in range(1, self.max_attempts + 1):
            outcome.attempts = attempt
            reply = self.llm.complete(messages, max_tokens=self.sampling.max_tokens,
                                      temperature=self.sampling.temperature(attempt))
            outcome.prompt_tokens += reply.prompt_tokens or 0
            outcome.completion_tokens += reply.completion_tokens or 0
            outcome.cached_prompt_tokens += reply.cached_prompt_tokens or 0
            messages.append({"role": "assistant", "content": reply.text})
            try:
                if cut_off(reply):
                    raise NoCodeError(cut_off_error(self.sampling))
                code = extract_code(reply.text)
            except NoCodeError as exc:
                error, stdout = str(exc), ""
            else:
                outcome.program = code
                result = self.executor(code, namespace)
                if result.infrastructure_error:
                    raise InfrastructureFailure(result.infrastructure_error)
                outcome.stdout, outcome.calls = result.stdout, list(result.calls)
                error, stdout = _program_error(result), result.stdout
                if error is None:
                    outcome.answer = normalize_answer(result.value)
                    outcome.error = None
                    break
            outcome.errors.append(error)
            outcome.error = error
            messages.append(
                {"role": "user", "content": prompts.render("program_retry", error=error, stdout=stdout[-1500:])}
            )
        outcome.seconds = time.perf_counter() - started
        if outcome.error is not None:
            outcome.answer = ERROR_ANSWER
        return outcome


def _program_error(result: ExecutionResult) -> str | None:
    if result.error:
        return result.error
    if not result.has_final_result:
        return "the program did not set the variable `final_result`"
    if result.value is None:
        return "`final_result` is None; it must hold the answer"
    return None
