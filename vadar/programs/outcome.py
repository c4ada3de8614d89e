"""What answering one question produced, whichever agent answered it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vadar.programs.step_loop import LLMCost
from vadar.programs.answers import ERROR_ANSWER, normalize_answer
from vadar.programs.records import TechniqueRecords
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
    techniques: TechniqueRecords = field(default_factory=TechniqueRecords)  # what reasoning techniques recorded
    infrastructure: bool = False  # the endpoint or the sandbox failed, not the program: asked again on resume
    checks_refused: int = 0  # programs the call checks sent back before the sandbox ran them
    answers_refused: int = 0  # programs that ran and answered another kind of answer than the question's

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


def program_error(result: ExecutionResult) -> str | None:
    """Why a program's run does not count as an answer, or None if it does."""
    if result.error:
        return result.error + _empty_results_hint(result)
    if not result.has_final_result:
        return "the program did not set the variable `final_result`"
    if result.value is None:
        return "`final_result` is None; it must hold the answer"
    return None


@dataclass(frozen=True)
class ProgramRun:
    """A program run once in the sandbox: its answer, or why it gave none."""

    answer: Any
    error: str | None
    result: ExecutionResult

    @property
    def failed(self) -> bool:
        return self.error is not None


def run_program(executor: Executor, code: str, namespace: Mapping[str, Any]) -> ProgramRun:
    """Run `code` once: the normalised `final_result`, or the error the LLM would be shown.

    A failure of the sandbox machinery raises `InfrastructureFailure` instead of blaming the program.
    """
    result = check_infrastructure(executor(code, namespace))
    error = program_error(result)
    return ProgramRun(None if error is not None else normalize_answer(result.value), error, result)


def _empty_results_hint(result: ExecutionResult) -> str:
    """Name the calls that found nothing when a program indexes into an empty list.

    "IndexError: list index out of range" alone sends a small model back to the same `loc(...)[0]`;
    the usual cause is a phrase that matched no object (an attribute the question never gave). Told
    only to check the list, the embedded model wrote the same `x = loc(...)[0]` three times in a row;
    where the failing line is such a lookup, the hint spells out the test with its own names.
    """
    if "IndexError" not in (result.error or ""):
        return ""
    empty = [call for call in result.calls if call.error is None and call.result == []]
    shown = []
    for call in empty[:2]:
        words = ", ".join(repr(arg) for arg in call.args[1:] if isinstance(arg, str))  # [0] is the image
        shown.append(f"{call.name}(image, {words})" if words else f"{call.name}(...)")
    if not shown:
        return ""
    hint = (f"\nHint: {' and '.join(shown)} returned an empty list: nothing matched. Use the question's own "
            "words, and check that a list is not empty before taking an element.")
    lookup = _FIRST_OF_CALL.match((result.error or "").splitlines()[0])
    if lookup is not None:
        name, call = lookup.group("name"), lookup.group("call")
        hint += (f" If there may be no such object, keep the list: `{name}_boxes = {call}`, then "
                 f"`if {name}_boxes:` take `{name} = {name}_boxes[0]`, else answer for none found.")
    return hint


_FIRST_OF_CALL = re.compile(r"^line \d+: (?P<name>[A-Za-z_]\w*) = (?P<call>\w+\(.*\))\[0\]\s*$")
"""A failing line that takes the first element of a call's result: `ball = loc(image, "red ball")[0]`."""
