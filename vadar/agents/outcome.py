"""What answering one question produced, whichever agent answered it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vadar.agents.step_loop import LLMCost
from vadar.agents.answers import ERROR_ANSWER
from vadar.sandbox import ExecutionResult

Executor = Callable[[str, Mapping[str, Any]], ExecutionResult]
"""Runs a program with a namespace; `vadar.sandbox.execute` with limits bound."""


class InfrastructureFailure(RuntimeError):
    """The sandbox itself failed (not the program): stop instead of blaming the LLM."""


@dataclass
class ProgramOutcome:
    """Everything we keep about answering one question."""

    answer: Any = ERROR_ANSWER
    program: str | None = None
    error: str | None = None
    cost: LLMCost = field(default_factory=LLMCost)
    seconds: float = 0.0
    stdout: str = ""
    calls: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what the LLM was told along the way
    infrastructure: bool = False  # the endpoint or the sandbox failed, not the program: asked again on resume

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def attempts(self) -> int:
        """LLM replies it took (program attempts, tool-agent turns)."""
        return self.cost.replies


def check_infrastructure(result: ExecutionResult) -> ExecutionResult:
    """Raise for a failure of the sandbox machinery; program errors pass through."""
    if result.infrastructure_error:
        raise InfrastructureFailure(result.infrastructure_error)
    return result
