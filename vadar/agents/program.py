"""The Program agent: one program per question over the whole API, run in the sandbox.

The prompt puts the stable part first (rules, API text, worked example in the system message) and
the question last, so an OpenAI-compatible server with prefix caching reuses the shared prefix
across questions. A failing program is sent back with its error, up to `max_attempts` times.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from base_modules.size_priors import SizePrior, priors_in_text
from vadar import prompts
from vadar.programs.outcome import Executor, ProgramOutcome, check_infrastructure, program_error
from vadar.agents.formalize import Constraint, Formalizer, type_issue
from vadar.agents.reflect import Reflector
from vadar.programs.sampling import PROGRAM, Sampling
from vadar.programs.step_loop import LLMCost, Reply, StepLoop, Verdict
from vadar.agents.unit_tests import TestScenes, TestWriter, UnitCheck
from vadar.agents.voting import decided, plurality
from vadar.programs.answers import ERROR_ANSWER, normalize_answer
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.config import ReasoningConfig
from vadar.llm.chat import ChatModel

def system_prompt(api_text: str, examples: str | None = None) -> str:
    """The stable, cacheable prefix shared by every question of a run."""
    return prompts.render("program_system", api=api_text.strip(),
                          examples=(examples or prompts.render("program_example")).strip())


def _merged(chosen: ProgramOutcome, outcomes: Sequence[ProgramOutcome]) -> ProgramOutcome:
    """`chosen` as the answer of several programs written for one question: it carries the cost and
    the errors of all of them."""
    result = dataclasses.replace(chosen, cost=LLMCost(), errors=[e for o in outcomes for e in o.errors],
                                 extra=dict(chosen.extra))
    for outcome in outcomes:
        result.cost.include(outcome.cost)
    return result


def size_priors_block(priors: Sequence[SizePrior]) -> str | None:
    """The typical sizes of the question's nouns, one line each, or None when it names none."""
    if not priors:
        return None
    return prompts.render("size_priors", priors=[prior.summary() for prior in priors]).strip()


def opening_messages(question: str, api_text: str, examples: str | None = None,
                     constraint: Constraint | None = None, priors: Sequence[SizePrior] = ()) -> list[dict[str, Any]]:
    """The first request for `question`: the shared prefix as system message, the question last
    (with the size priors of its nouns after it, when given)."""
    block = size_priors_block(priors)
    if constraint is None:
        asked = prompts.render("program_question", question=question, priors=block)
    else:
        asked = prompts.render("program_question_constrained", question=question, constraint=constraint,
                               priors=block)
    return [
        {"role": "system", "content": system_prompt(api_text, examples)},
        {"role": "user", "content": asked},
    ]


class ProgramAgent:
    """Writes, runs and repairs one program per question (or `reasoning.samples` of them, voted)."""

    def __init__(self, llm: ChatModel, executor: Executor, *, max_attempts: int = 5,
                 sampling: Sampling = PROGRAM, max_reply_tokens: int | None = None,
                 same_error_limit: int | None = None, reasoning: ReasoningConfig | None = None) -> None:
        self.llm, self.max_attempts, self.max_reply_tokens = llm, max_attempts, max_reply_tokens
        self.loop = StepLoop(llm, sampling, max_attempts, max_reply_tokens)
        self.executor = executor
        self.same_error_limit = same_error_limit  # None: always use every attempt
        self.reasoning = reasoning or ReasoningConfig()
        self.formalizer = Formalizer(llm, max_reply_tokens) if self.reasoning.formalize else None
        self.reflector = Reflector(llm, max_reply_tokens) if self.reasoning.reflect else None
        self.test_writer = TestWriter(llm, max_reply_tokens) if self.reasoning.tests else None

    def solve(self, question: str, api_text: str, namespace: Mapping[str, Any],
              examples: str | None = None, test_scenes: TestScenes | None = None, *,
              accept: Callable[[ProgramOutcome], bool] | None = None, tries: int = 1) -> ProgramOutcome:
        """`test_scenes`: the data set's kind of test scene and its oracle modules (needed by `reasoning.tests`).

        With `accept` (a labelled build: is this program's answer right?), up to `tries` programs are
        written, the greedy one first and then sampled ones, until one is accepted; the answer is that
        program's, else the greedy one's, and the cost is all of them."""
        started = time.perf_counter()
        cost, extra = LLMCost(), {}
        constraint = None
        if self.formalizer is not None:
            formalized = self.formalizer.formalize(question, cost)
            constraint, extra = formalized.constraint, formalized.record()
        check = self._unit_check(question, test_scenes, cost, extra)
        priors = priors_in_text(question) if self.reasoning.size_priors else []
        if priors:
            extra["size_priors"] = [prior.name for prior in priors]
            if not self.reasoning.size_priors_shown:
                extra["size_priors_check_only"] = True
        if accept is not None:
            outcome = self._until_accepted(accept, tries, lambda sample: self._write(
                question, api_text, namespace, examples, constraint, sample, check, priors))
        else:
            outcomes = self._samples(lambda sample: self._write(
                question, api_text, namespace, examples, constraint, sample, check, priors),
                stop_early=self.reasoning.vote_until_decided and check is None)
            outcome = outcomes[0] if self.reasoning.samples == 1 else self._voted(outcomes)
        outcome.extra = {**extra, **outcome.extra}
        outcome.cost.include(cost)
        outcome.seconds = time.perf_counter() - started
        return outcome

    @staticmethod
    def _until_accepted(accept: Callable[[ProgramOutcome], bool], tries: int,
                        write: Callable[[int], ProgramOutcome]) -> ProgramOutcome:
        """Programs written one by one until `accept` takes one (at most `tries`), as one outcome."""
        outcomes: list[ProgramOutcome] = []
        accepted: int | None = None
        for sample in range(max(tries, 1)):
            outcomes.append(write(sample))
            if accept(outcomes[-1]):
                accepted = sample
                break
        result = _merged(outcomes[accepted if accepted is not None else 0], outcomes)
        if tries > 1:
            result.extra.update({"tries": len(outcomes), "accepted_try": accepted})
        return result

    def _samples(self, write: Callable[[int], ProgramOutcome], stop_early: bool) -> list[ProgramOutcome]:
        """`reasoning.samples` programs, or (with `stop_early`) only as many as it takes until the rest
        cannot change the vote's answer. Not with unit tests: the voters change with each program's
        test results, so every program is written."""
        outcomes: list[ProgramOutcome] = []
        total = self.reasoning.samples
        for sample in range(total):
            outcomes.append(write(sample))
            if (stop_early and sample + 1 < total
                    and decided([o.answer for o in outcomes], [not o.failed for o in outcomes], total - sample - 1,
                                self.reasoning.vote_tolerance)):
                break
        return outcomes

    def _sample_loop(self, sample: int) -> StepLoop:
        """Sample 0 is today's greedy program; sample k is drawn warmer with seed k."""
        if sample == 0:
            return self.loop
        sampling = dataclasses.replace(self.loop.sampling, first_temperature=self.reasoning.sample_temperature)
        return StepLoop(self.llm, sampling, self.max_attempts, self.max_reply_tokens, seed=sample)

    def _unit_check(self, question: str, scenes: TestScenes | None, cost: LLMCost,
                    extra: dict[str, Any]) -> UnitCheck | None:
        """The question's tests written by the model, or None (off, refused twice, or no scenes possible)."""
        if self.test_writer is None or scenes is None:
            return None
        written = self.test_writer.write(question, scenes.kind, cost)
        extra["unit_tests"] = [{"objects": t.objects, "answer": t.answer} for t in written.tests]
        extra["unit_tests_refused"] = written.refused
        if not written.tests:
            return None
        return UnitCheck(written.tests, scenes, self.executor, self.reasoning.vote_tolerance)

    def _voted(self, outcomes: list[ProgramOutcome]) -> ProgramOutcome:
        """The plurality answer's first program, carrying the cost and errors of all of them.

        With unit tests, only the working programs that pass the most tests vote.
        """
        best = max((o.extra.get("tests_passed", 0) for o in outcomes if not o.failed), default=0)
        voters = [not o.failed and o.extra.get("tests_passed", 0) == best for o in outcomes]
        vote = plurality([o.answer for o in outcomes], voters, self.reasoning.vote_tolerance)
        result = _merged(outcomes[vote.winner if vote.winner is not None else 0], outcomes)
        result.extra.update({
            "samples": [{"answer": o.answer, "error": o.error is not None, "revisions": o.extra.get("revisions", []),
                         **({"tests_passed": o.extra["tests_passed"]} if "tests_passed" in o.extra else {})}
                        for o in outcomes],
            "chosen_sample": vote.winner, "agreement": round(vote.agreement, 4)})
        return result

    def _write(self, question: str, api_text: str, namespace: Mapping[str, Any], examples: str | None,
               constraint: Constraint | None, sample: int = 0, check: UnitCheck | None = None,
               priors: Sequence[SizePrior] = ()) -> ProgramOutcome:
        """One program: written, run, repaired on errors, revised once if its answer does not fit."""
        shown = priors if self.reasoning.size_priors_shown else ()  # else only the reflect check reads them
        messages = opening_messages(question, api_text, examples, constraint, shown)
        outcome = ProgramOutcome()
        before_revision: list[ProgramOutcome] = []

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
                result = check_infrastructure(self.executor(code, namespace))
                outcome.stdout, outcome.calls = result.stdout, list(result.calls)
                error, stdout = program_error(result), result.stdout
                if error is None:
                    outcome.answer, outcome.error = normalize_answer(result.value), None
                    issue = None if before_revision else self._review(question, code, outcome, constraint, check,
                                                                      priors)
                    if issue is None:
                        return Verdict.accept()
                    before_revision.append(dataclasses.replace(outcome, calls=list(outcome.calls)))
                    outcome.extra.setdefault("revisions", []).append(issue)
                    return Verdict.retry(prompts.render("answer_revise", reason=issue))
                error += _example_variable_hint(error, messages[0]["content"])
            outcome.errors.append(error)
            outcome.error = error
            if self._stuck(outcome.errors):
                return Verdict.give_up()
            return Verdict.retry(prompts.render("program_retry", error=error, stdout=stdout[-1500:]))

        self._sample_loop(sample).run(messages, judge, outcome.cost)
        if outcome.error is not None and before_revision:  # the revision broke it: keep the answer before
            kept = before_revision[0]
            outcome.answer, outcome.program, outcome.error = kept.answer, kept.program, None
            outcome.stdout, outcome.calls = kept.stdout, kept.calls
        if outcome.error is not None:
            outcome.answer = ERROR_ANSWER
        elif check is not None and outcome.program is not None:
            outcome.extra["tests_passed"] = check.passed(outcome.program)
        return outcome

    def _review(self, question: str, program: str, outcome: ProgramOutcome, constraint: Constraint | None,
                check: UnitCheck | None = None, priors: Sequence[SizePrior] = ()) -> str | None:
        """Why a working program's answer should be revised: it contradicts the constraint's answer
        type, or (with `reflect`) the question's form, a plausible range, the size priors of the
        question's nouns or the reflector's check, or (with `tests`) it fails one of the model's own
        test scenes."""
        issue = None
        if self.reflector is not None:
            issue = self.reflector.review(question, program, outcome.answer, constraint, outcome.cost, priors,
                                          looked=bool(outcome.calls))
        elif constraint is not None:
            issue = type_issue(outcome.answer, constraint.answer_type)
        if issue is None and check is not None:
            issue = check.failure(program)
        return issue

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
