"""The plain writer: one program per task, written, run in the sandbox and repaired on errors.

The prompt puts the stable part first (rules, API text, worked example in the system message) and
the question last, so an OpenAI-compatible server with prefix caching reuses the shared prefix
across questions. A program whose calls do not fit the API (`programs/call_checks`) is sent back
unrun; a failing program is sent back with its error; both up to `max_attempts` times. The
conversation can go on after a working program (`revise`): a revision request is one more step of
the same conversation, under the same limit.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from base_modules.size_priors import SizePrior
from vadar import prompts
from vadar.agents.formalize import Constraint
from vadar.agents.techniques.task import Task
from vadar.llm.chat import ChatModel, Message, Role
from vadar.programs.answer_kinds import answer_problem
from vadar.programs.answers import ERROR_ANSWER, normalize_answer
from vadar.programs.call_checks import CALL_CHECKS, Check, check_program
from vadar.programs.call_signatures import callable_api
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.programs.outcome import Executor, ProgramOutcome, check_infrastructure, program_error
from vadar.programs.sampling import PROGRAM, Sampling
from vadar.programs.step_loop import Reply, StepLoop, Verdict


def system_prompt(api_text: str, examples: str | None = None) -> str:
    """The stable, cacheable prefix shared by every question of a run."""
    return prompts.render("program_system", api=api_text.strip(),
                          examples=(examples or prompts.render("program_example")).strip())


def size_priors_block(priors: Sequence[SizePrior]) -> str | None:
    """The typical sizes of the question's nouns, one line each, or None when it names none."""
    if not priors:
        return None
    return prompts.render("size_priors", priors=[prior.summary() for prior in priors]).strip()


def opening_messages(question: str, api_text: str, examples: str | None = None,
                     constraint: Constraint | None = None, priors: Sequence[SizePrior] = (),
                     find_order: str | None = None) -> list[dict[str, Any]]:
    """The first request for `question`: the shared prefix as system message, the question last
    (with the objects of its relation chains in the order to find them, and the size priors of its
    nouns, after it, when given)."""
    block = size_priors_block(priors)
    if constraint is None:
        asked = prompts.render("program_question", question=question, priors=block, find_order=find_order)
    else:
        asked = prompts.render("program_question_constrained", question=question, constraint=constraint,
                               priors=block, find_order=find_order)
    return [
        {"role": "system", "content": system_prompt(api_text, examples)},
        {"role": "user", "content": asked},
    ]


@dataclass(frozen=True)
class Ran:
    """A program that ran without an error, and what it answered."""

    program: str
    answer: Any
    stdout: str
    calls: list[Any]


@dataclass
class Draft:
    """A program being written: its outcome so far and the conversation that can go on."""

    task: Task
    outcome: ProgramOutcome
    messages: list[Message]
    loop: StepLoop
    steps: int  # replies so far
    # the last program that ran but answered another kind of answer than the question asks: it
    # stands when no repair answers in kind, so the check never leaves a question without an answer
    unfitting: Ran | None = None

    @property
    def steps_left(self) -> bool:
        return self.steps < self.loop.max_steps


class PlainWriter:
    """Writes, runs and repairs one program per task; no technique of its own."""

    def __init__(self, llm: ChatModel, executor: Executor, *, max_attempts: int = 5, sampling: Sampling = PROGRAM,
                 same_error_limit: int | None = None, sample_temperature: float = 0.7,
                 call_checks: tuple[Check, ...] = CALL_CHECKS, check_answers: bool = True) -> None:
        self.llm, self.executor, self.max_attempts = llm, executor, max_attempts
        self.call_checks = call_checks  # run before the sandbox; a failed one is repaired like an error
        self.check_answers = check_answers  # an answer of another kind than the question's, repaired alike
        self.loop = StepLoop(llm, sampling, max_attempts, role=Role.PROGRAM)
        self.same_error_limit = same_error_limit  # None: always use every attempt
        self.sample_temperature = sample_temperature

    def write(self, task: Task) -> ProgramOutcome:
        return self.finish(self.draft(task))

    def draft(self, task: Task) -> Draft:
        """Ask and repair until a program works or the attempts run out."""
        messages = opening_messages(task.question.text, task.api_text, task.examples, task.constraint,
                                    task.shown_priors, task.find_order)
        draft = Draft(task, ProgramOutcome(), messages, self._sample_loop(task.sample), 0)
        self._run(draft, first_step=1)
        return draft

    def revise(self, draft: Draft, request: str) -> Draft:
        """Ask for a revision of the working program in `draft` (when steps are left), repaired like any
        program; the outcome is then the revised program's, working or not."""
        if draft.steps_left:
            draft.messages.append({"role": "user", "content": request})
            self._run(draft, first_step=draft.steps + 1)
        return draft

    @staticmethod
    def finish(draft: Draft) -> ProgramOutcome:
        outcome = draft.outcome
        if outcome.error is not None:
            outcome.answer = ERROR_ANSWER
        return outcome

    def _run(self, draft: Draft, first_step: int) -> None:
        outcome, messages, namespace = draft.outcome, draft.messages, draft.task.namespace
        api = callable_api(draft.task.api_text, namespace.keys())

        def judge(reply: Reply) -> Verdict:
            stdout = ""
            try:
                if reply.cut_off:
                    raise NoCodeError(reply.cut_off_error)
                code = extract_code(reply.text)
            except NoCodeError as exc:
                error = str(exc)
            else:
                outcome.program = code
                problems = check_program(code, api, self.call_checks, draft.task.question.text)
                if problems:
                    return self._refuse(outcome, [problem.message for problem in problems])
                result = check_infrastructure(self.executor(code, namespace))
                outcome.stdout, outcome.calls = result.stdout, list(result.calls)
                error, stdout = program_error(result), result.stdout
                if error is None:
                    answer = normalize_answer(result.value)
                    mismatch = answer_problem(draft.task.question.text, answer) if self.check_answers else None
                    if mismatch is None:
                        outcome.answer, outcome.error, draft.unfitting = answer, None, None
                        return Verdict.accept()
                    draft.unfitting = Ran(code, answer, result.stdout, list(result.calls))
                    return self._refuse_answer(outcome, mismatch)
                error += _example_variable_hint(error, messages[0]["content"])
            return self._send_back(outcome, error, prompts.render("program_retry", error=error, stdout=stdout[-1500:]))

        draft.steps = draft.loop.run(messages, judge, outcome.cost, first_step=first_step).steps
        if outcome.error is not None and draft.unfitting is not None:
            ran = draft.unfitting
            outcome.program, outcome.answer, outcome.error = ran.program, ran.answer, None
            outcome.stdout, outcome.calls = ran.stdout, list(ran.calls)

    def _refuse(self, outcome: ProgramOutcome, problems: list[str]) -> Verdict:
        """A program whose calls do not fit the API: repaired as an error would be, never run."""
        outcome.stdout, outcome.calls = "", []  # nothing ran: no earlier attempt's calls shown as this one's
        outcome.checks_refused += 1
        return self._send_back(outcome, "\n".join(problems), prompts.render("program_check", problems=problems))

    def _refuse_answer(self, outcome: ProgramOutcome, problem: str) -> Verdict:
        """A program that ran but answered something no gold answer of its question could be: repaired
        as an error would be (`answer_kinds`); when no repair answers in kind, it stands (`_run`)."""
        outcome.answers_refused += 1
        return self._send_back(outcome, problem, prompts.render("program_answer", problem=problem))

    def _send_back(self, outcome: ProgramOutcome, error: str, feedback: str) -> Verdict:
        """A failed attempt becomes the outcome's error and goes back with `feedback`, unless the same
        error keeps coming (`_stuck`)."""
        outcome.errors.append(error)
        outcome.error = error
        if self._stuck(outcome.errors):
            return Verdict.give_up()
        return Verdict.retry(feedback)

    def _sample_loop(self, sample: int) -> StepLoop:
        """Sample 0 is today's greedy program; sample k is drawn warmer with seed k."""
        if sample == 0:
            return self.loop
        sampling = dataclasses.replace(self.loop.sampling, first_temperature=self.sample_temperature)
        return dataclasses.replace(self.loop, sampling=sampling, seed=sample)

    def _stuck(self, errors: list[str]) -> bool:
        """The last `same_error_limit` attempts failed alike: more retries rarely change that.

        On 3 x 130 CLEVR runs (docs/results/throughput.md), stopping after 3 identical errors saved
        79 of 629 replies and lost no right answer; after 2, 129 replies and 2 right answers.
        """
        limit = self.same_error_limit
        if limit is None or len(errors) < limit:
            return False
        recent = {_without_line_numbers(error) for error in errors[-limit:]}
        return len(recent) == 1


def _without_line_numbers(error: str) -> str:
    """The same failing statement moved up or down a line is the same mistake."""
    return _LINE_NUMBER.sub("line", error)


_LINE_NUMBER = re.compile(r"\bline \d+")


_UNDEFINED_NAME = re.compile(r"NameError: name '(\w+)' is not defined")


def _example_variable_hint(error: str, system_prompt: str) -> str:
    """Small models reuse the worked example's variables (`sphere`) as if they existed already."""
    match = _UNDEFINED_NAME.search(error)
    if match is None:
        return ""
    name = match.group(1)
    if not re.search(rf"^\s*(?:{name}\s*=|for\s+{name}\s+in\b)", system_prompt, re.MULTILINE):
        return ""
    return (f"\nNote: `{name}` is a variable of the example program, not of this one; this program must "
            "set its own variables (find objects with loc) before using them.")
