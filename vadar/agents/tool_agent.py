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
from dataclasses import dataclass, field
from typing import Any

from vadar import prompts
from vadar.programs.outcome import Executor, ProgramOutcome, check_infrastructure
from vadar.programs.sampling import TOOL_STEP
from vadar.programs.step_loop import Reply, StepLoop, Verdict
from vadar.programs.answers import ERROR_ANSWER
from vadar.llm.chat import ChatModel, Role

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
        self.loop = StepLoop(llm, TOOL_STEP, budget, role=Role.TOOL_STEP)
        self.executor = executor

    @property
    def budget(self) -> int:
        return self.loop.max_steps

    def solve(self, question: str, api_text: str, namespace: Mapping[str, Any]) -> ProgramOutcome:
        started = time.perf_counter()
        messages = [
            {"role": "system", "content": prompts.render("tool_system", api=api_text.strip(), budget=self.budget)},
            {"role": "user", "content": prompts.render("question", question=question).rstrip()},
        ]
        outcome = ProgramOutcome()
        session = _Steps()

        def judge(reply: Reply) -> Verdict:
            action = parse_action(reply.text)
            if action.answer:
                outcome.answer, outcome.error = action.answer, None
                return Verdict.accept()
            error, output, repeated = self._observe(reply, action, namespace, session, outcome)
            if error and not repeated:
                outcome.errors.append(error)
            outcome.error = f"no <answer> within {self.budget} replies" + (f"; last error: {error}" if error else "")
            return Verdict.retry(prompts.render(
                "tool_observation", error=error, output=output[-2000:],
                remaining=self.budget - reply.attempt, repeated=repeated))

        self.loop.run(messages, judge, outcome.cost)
        outcome.program = "\n\n".join(session.steps) or None
        outcome.seconds = time.perf_counter() - started
        if outcome.error is not None:
            outcome.answer = ERROR_ANSWER
        return outcome

    def _observe(self, reply: Reply, action: Action, namespace: Mapping[str, Any], session: _Steps,
                 outcome: ProgramOutcome) -> tuple[str | None, str, bool]:
        """Run the reply's step (or recall a repeated one): (error, new output, repeated)."""
        if reply.cut_off and action.answer is None:
            return reply.cut_off_error, "", False
        if action.answer is not None:
            return "the <answer> was empty", "", False
        if action.code is None:
            return "reply with code in <execute></execute> or the result in <answer></answer>", "", False
        key = _step_key(action.code)
        if key in session.tried:
            outcome.errors.append(REPEATED_STEP)
            error, output = session.tried[key]
            return error, output, True
        result = check_infrastructure(self.executor("\n".join([*session.steps, action.code]) + "\n", namespace))
        outcome.calls = list(result.calls)
        shown = session.shown
        output = result.stdout[len(shown):] if result.stdout.startswith(shown) else result.stdout
        if result.error is None:
            session.steps.append(action.code)
            session.shown = result.stdout
        session.tried[key] = (result.error, output)
        return result.error, output, False


@dataclass
class _Steps:
    """The successful steps so far, what they printed, and every step tried with its result."""

    steps: list[str] = field(default_factory=list)
    shown: str = ""
    tried: dict[str, tuple[str | None, str]] = field(default_factory=dict)
