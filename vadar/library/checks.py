"""Behaviour checks: assertions the LLM writes from a helper's name and docstring alone.

Without gold answers, agreement between programs says little when the helper is used the same
way by all of them. A check asks what any correct implementation must satisfy ("every box left
of the reference has a smaller centre x") and runs it, on a real image of the batch, against the
implementation. A failed assertion is evidence that the body contradicts its name; a check that
cannot run at all (its own bug) is sent back to be fixed, and if it never runs it is no evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api_store import FunctionRecord
from vadar import prompts
from vadar.programs.calls import helpers_called
from vadar.programs.outcome import Executor, check_infrastructure
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import Reply, StepLoop, Verdict
from vadar.programs.api_text import function_stub, render_api
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.llm.chat import ChatModel, Role
from vadar.programs.namespace import library_functions

CHECK = Sampling(max_tokens=300)


@dataclass(frozen=True)
class CheckResult:
    """`passed` None: no runnable check (no evidence either way)."""

    passed: bool | None
    code: str | None = None
    error: str | None = None


class BehaviourChecks:
    """Writes a check per helper and runs it against the current implementation."""

    def __init__(self, llm: ChatModel, executor: Executor, *, max_attempts: int = 2) -> None:
        self.loop = StepLoop(llm, CHECK, max_attempts, role=Role.HELPER_CHECK)
        self.executor = executor

    def run(self, record: FunctionRecord, library: list[FunctionRecord],
            namespace: Mapping[str, Any]) -> CheckResult:
        """Write and run the check of `record`; `namespace` holds the image and the modules."""
        messages = [
            {"role": "system", "content": prompts.render("check_system", api=render_api(library))},
            {"role": "user", "content": prompts.render(
                "check_request", stub=function_stub(record.name, record.signature, record.docstring))},
        ]
        full = {**namespace, **library_functions(library)}
        outcome: list[CheckResult] = [CheckResult(None)]

        def judge(reply: Reply) -> Verdict:
            try:
                code = extract_code(reply.text)
            except NoCodeError as exc:
                return Verdict.retry(prompts.render("check_retry", error=str(exc)))
            if "assert" not in code or not helpers_called(code, [record.name]):  # `_left(` is not `_objects_left(`
                return Verdict.retry(prompts.render(
                    "check_retry", error=f"the check must call {record.name} and assert something"))
            result = check_infrastructure(self.executor(code + "\nfinal_result = True\n", full))
            if result.error is None:
                outcome[0] = CheckResult(True, code)
                return Verdict.accept()
            if "AssertionError" in result.error:
                outcome[0] = CheckResult(False, code, result.error)
                return Verdict.accept()
            return Verdict.retry(prompts.render("check_retry", error=result.error))

        self.loop.run(messages, judge)
        return outcome[0]
