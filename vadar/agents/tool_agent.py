"""A multi-turn tool-calling agent over the same modules: the SpatialAgent-style baseline.

The LLM issues code inside `<execute>...</execute>`, sees what it printed (or the error), and ends
with `<answer>...</answer>`, within a budget of replies. Steps run in the same sandbox as programs;
earlier successful steps are replayed before each new one, so variables persist without keeping a
live interpreter, and only the new step's output is shown. A step that repeats an earlier one
exactly is not run again (tools are deterministic): the model gets the earlier result once more
and is asked to answer from it or try something else, since small models otherwise loop on one
step until the budget runs out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vadar import prompts
from vadar.agents.program import Executor, InfrastructureFailure, ProgramOutcome
from vadar.agents.sampling import TOOL_STEP, cut_off, cut_off_error
from vadar.answers import ERROR_ANSWER
from vadar.llm.chat import ChatModel

_EXECUTE = re.compile(r"<execute>(.*?)(?:</execute>|\Z)", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_FENCE = re.compile(r"^```(?:python|py)?\s*\n?|\n?```\s*$")
REPEATED_STEP = "repeated an earlier step; its result was shown again"


def _step_key(code: str) -> str:
    """Code with blank lines and trailing spaces dropped, so trivially re-typed steps match."""
    return "\n".join(line.rstrip() for line in code.strip().splitlines() if line.strip())


@dataclass(frozen=True)
class Action:
    """One parsed reply: code to execute, a final answer, or neither (a format error)."""

    code: str | None = None
    answer: str | None = None


def parse_action(reply: str) -> Action:
    """An answer wins over code only if it comes first; code is unfenced if the model fenced it."""
    answer, execute = _ANSWER.search(reply), _EXECUTE.search(reply)
    if answer and (not execute or answer.start() < execute.start()):
        return Action(answer=answer.group(1).strip())
    if execute:
        code = _FENCE.sub("", execute.group(1).strip()).strip()
        return Action(code=code or None)
    return Action()


class ToolAgent:
    """Answers by calling tools turn by turn, within `budget` LLM replies."""

    def __init__(self, llm: ChatModel, executor: Executor, *, budget: int = 8) -> None:
        if budget < 1:
            raise ValueError("budget must be at least 1")
        self.llm = llm
        self.executor = executor
        self.budget = budget

    def solve(self, question: str, api_text: str, namespace: Mapping[str, Any]) -> ProgramOutcome:
        started = time.perf_counter()
        messages = [
            {"role": "system", "content": prompts.render("tool_system", api=api_text.strip(), budget=self.budget)},
            {"role": "user", "content": f"Question: {question}"},
        ]
        outcome = ProgramOutcome(answer=ERROR_ANSWER, program=None, error=None, attempts=0)
        steps: list[str] = []
        tried: dict[str, tuple[str | None, str]] = {}  # step -> (error, output) it gave
        shown = ""
        for turn in range(1, self.budget + 1):
            outcome.attempts = turn
            repeated = False
            reply = self.llm.complete(messages, max_tokens=TOOL_STEP.max_tokens)
            outcome.prompt_tokens += reply.prompt_tokens or 0
            outcome.completion_tokens += reply.completion_tokens or 0
            outcome.cached_prompt_tokens += reply.cached_prompt_tokens or 0
            messages.append({"role": "assistant", "content": reply.text})
            action = parse_action(reply.text)
            if cut_off(reply) and action.answer is None:
                error, output = cut_off_error(TOOL_STEP), ""
            elif action.answer is not None:
                if action.answer:
                    outcome.answer, outcome.error = action.answer, None
                    break
                error, output = "the <answer> was empty", ""
            elif action.code is None:
                error, output = "reply with code in <execute></execute> or the result in <answer></answer>", ""
            elif (key := _step_key(action.code)) in tried:
                (error, output), repeated = tried[key], True
                outcome.errors.append(REPEATED_STEP)
            else:
                result = self.executor("\n".join([*steps, action.code]) + "\n", namespace)
                if result.infrastructure_error:
                    raise InfrastructureFailure(result.infrastructure_error)
                outcome.calls = list(result.calls)
                error = result.error
                output = result.stdout[len(shown):] if result.stdout.startswith(shown) else result.stdout
                if error is None:
                    steps.append(action.code)
                    shown = result.stdout
                tried[key] = (error, output)
            if error and not repeated:
                outcome.errors.append(error)
            outcome.error = f"no <answer> within {self.budget} replies" + (f"; last error: {error}" if error else "")
            remaining = self.budget - turn
            messages.append({"role": "user", "content": prompts.render(
                "tool_observation", error=error, output=output[-2000:], remaining=remaining, repeated=repeated)})
        outcome.program = "\n\n".join(steps) or None
        outcome.seconds = time.perf_counter() - started
        if outcome.error is not None:
            outcome.answer = ERROR_ANSWER
        return outcome
