"""The API agent: implements proposed functions depth-first and tests them on real module outputs.

When an implementation calls another proposed, not yet implemented function, that one is
implemented first, then the caller is tested. Each function gets up to `max_attempts` tries with
the error (and failing line) fed back. A function that calls itself, or that closes a cycle of
calls back to a function still being implemented, is marked failed with the reason; failed
functions disappear from later prompts. The agent only reads the library (`LibraryView`); every
attempt, implementation and failure is reported to its `ImplementationLog`, which the library stores.

A function whose name makes a claim that ground truth can check is implemented by
generate-and-test instead (`helper_search`): sampled implementations until one passes the claim's
ground-truth cases; the search is recorded as a `searched` decision. A function whose name claims
nothing checkable is searched by outcome when an `outcome` verifier is given: its samples are
compared on the build questions' gold answers and the best kept (`vadar.library.outcome_check`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from api_store import FunctionRecord, FunctionStatus
from api_store.names import prompt_hash
from vadar import prompts
from vadar.agents.api_request import opening_messages, reply_prefill
from vadar.programs.outcome import Executor, check_infrastructure
from vadar.programs.sampling import IMPLEMENTATION, implementation_sampling
from vadar.agents.helper_search import (FIRST_PASS, CaseCheck, ComparingVerifier, HelperVerifier, Sample,
                                       SearchRecord, SearchRule, SearchSettings, search)
from vadar.agents.library_view import ImplementationLog, LibraryView
from vadar.agents.resumed_attempts import attempts_made, last_error, resumed_turns
from vadar.programs.step_loop import LLMCost, LoopEnd, Reply, StepLoop, Verdict
from vadar.programs.calls import called_names
from vadar.programs.stubs import StubFormatError, parse_implementation
from vadar.programs.call_signatures import return_mismatch
from vadar.programs.helper_rules import MAX_CODE_CHARS, cycle_text, name_problem, recursion_problem
from vadar.programs.helper_calls import build_test_call
from vadar.programs.api_text import render_api
from vadar.llm.chat import ChatModel, Role
from vadar.programs.namespace import library_functions
from vadar.sandbox import LibraryFunction, LibrarySourceError, check_library_source
from vadar.text import one_line


# Replies a sampled implementation gets to run (the greedy one gets max_attempts). One: in a
# 100-question CLEVR build 10 of 13 second replies to a failed sample copied it word for word, the
# other 3 made 2 samples run and neither was kept (about 3,900 completion tokens); a fresh sample ran
# 13 times in 24.
SAMPLE_ATTEMPTS = 1


@dataclass(frozen=True)
class TestContext:
    """A real question of the batch to test functions on: its text and sandbox namespace."""

    __test__ = False  # not a pytest test class

    question: str
    namespace: Mapping[str, Any]
    words: Mapping[str, str] = field(default_factory=dict)  # example values for text parameters


@dataclass
class ImplementationReport:
    """What happened to each function this agent touched, in the order they finished."""

    implemented: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    searches: dict[str, SearchRecord] = field(default_factory=dict)  # helpers implemented by generate-and-test
    cost: LLMCost = field(default_factory=LLMCost)


def library_namespace(store: LibraryView) -> dict[str, LibraryFunction]:
    """The library and the candidates before the gate (re-read: the API agent adds to them)."""
    return library_functions(store.library(with_candidates=True))


class ApiAgent:
    """Depth-first implementation of every proposed function in the store."""

    def __init__(
        self,
        llm: ChatModel,
        store: LibraryView,
        executor: Executor,
        *,
        log: ImplementationLog,
        max_attempts: int = 5,
        on_event: Callable[[str], None] | None = None,
        search: SearchSettings | None = None,
        verifier: HelperVerifier | None = None,
        outcome: ComparingVerifier | None = None,
        api_options: Mapping[str, Any] | None = None,
        prefill: bool = True,
    ) -> None:
        self.loop = StepLoop(llm, IMPLEMENTATION, max_attempts, role=Role.API_IMPLEMENT)
        self.prefill = prefill  # each reply starts with the stub, sent for the model to continue
        self.search = search or SearchSettings(samples=1)
        self.verifier = verifier
        self.outcome = outcome  # judges a helper whose name claims nothing ground truth can check
        self.on_event = on_event or (lambda message: None)
        self.store = store  # read only: what the agent does is reported to `log`, which stores it
        self.log = log
        self.executor = executor
        self.api_options = dict(api_options or {})  # `render_api` options: the frames, where a question has several

    def implement(self, names: Sequence[str], contexts: Sequence[TestContext]) -> ImplementationReport:
        """Implement `names` (and whatever they need); `contexts` supply real test inputs."""
        if not contexts:
            raise ValueError("the API agent needs at least one question to test functions on")
        report = ImplementationReport()
        for index, name in enumerate(names):
            self._implement(name, [], contexts[index % len(contexts)], report)
        return report

    # ------------------------------------------------------------------ one function

    def _implement(self, name: str, stack: list[str], context: TestContext, report: ImplementationReport) -> bool:
        record = self.store.current(name)
        if record.status.runs:
            return True
        if record.status.gone:
            return False
        problem = name_problem(name)  # the helper rules: a proposal stored before they held is not implemented
        if problem is not None:
            self._fail(name, problem, report)
            return False
        stack.append(name)
        try:
            return self._attempts(record, stack, context, report)
        finally:
            stack.pop()

    def repair(self, name: str, cases: Sequence[Mapping[str, Any]], context: TestContext) -> bool:
        """Re-implement `name` once more, shown the questions its current version got wrong.

        `cases` hold `question`, `expected` and `got`; the new version must pass its test call
        again. Returns whether a new version was implemented (the caller re-checks it).
        """
        record = self.store.current(name)
        messages = [*self._opening(record),
                    {"role": "assistant", "content": f"```python\n{record.code}```"},
                    {"role": "user", "content": prompts.render("api_repair", name=name, cases=list(cases))}]
        report = ImplementationReport()
        stack = [name]
        return self._attempts(record, stack, context, report, messages=messages, fail=False)

    def _opening(self, record: FunctionRecord, convention: str | None = None) -> list[dict[str, str]]:
        return opening_messages(record, self._api_text(exclude=record.name),
                                self._implemented_names(exclude=record.name), convention)

    def _loop_for(self, record: FunctionRecord, convention: str | None = None) -> StepLoop:
        """The step loop with room for the docstring; with `prefill`, each reply starts with the stub."""
        loop = dataclasses.replace(self.loop, sampling=implementation_sampling(record.docstring))
        return dataclasses.replace(loop, prefill=reply_prefill(record, convention)) if self.prefill else loop

    def _attempts(self, record: FunctionRecord, stack: list[str], context: TestContext,
                  report: ImplementationReport, *, messages: list[dict[str, str]] | None = None,
                  fail: bool = True) -> bool:
        name = record.name
        if messages is None and self._searchable(record):
            return self._search(record, stack, context, report)
        done = 0 if messages is not None else attempts_made(self.store, record)  # a resume counts them
        if done >= self.loop.max_steps:
            self._fail(name, f"no working implementation after {done} attempts; last error: "
                             f"{last_error(self.store, record)}", report)
            return False
        messages = messages if messages is not None else self._opening(record) + resumed_turns(self.store, record)
        end, step = self._converse(record, messages, self._loop_for(record), stack, context, report,
                                   first_step=done + 1)
        if end.done:
            self._store_implementation(name, step, report)
            return True
        if not fail:
            return False
        if step.fatal:
            self._fail(name, step.error or "failed", report)
        else:
            copied = " (the last one repeated an earlier reply word for word)" if step.repeated else ""
            self._fail(name, f"no working implementation after {end.steps} attempts{copied}; "
                             f"last error: {step.error}", report)
        return False

    def _converse(self, record: FunctionRecord, messages: list[dict[str, str]], loop: StepLoop, stack: list[str],
                  context: TestContext, report: ImplementationReport, *, first_step: int = 1,
                  numbered_from: int = 0, sample: int = 0) -> tuple[LoopEnd, _Step]:
        """One implementation conversation: each reply tried, recorded, its error fed back.

        `numbered_from` offsets the recorded attempt numbers (samples of a search follow each other);
        a later `sample` (1-based after the greedy one) is announced with its own replies.
        """
        name = record.name
        last: list[_Step] = []
        failed: set[tuple[str, str]] = set()  # (code, error) of this conversation's failed replies

        def judge(reply: Reply) -> Verdict:
            attempt = numbered_from + reply.attempt
            report.attempts[name] = attempt
            step = _Step(error=reply.cut_off_error) if reply.cut_off else self._try(
                name, reply.text, stack, context, report)
            last[:] = [step]
            self.log.attempt(name, attempt, code=step.code, error=step.error, test_call=step.test_call,
                             test_result=step.test_result, passed=step.error is None,
                             prompt_hash=prompt_hash(_prompt_text(messages[:-1])))
            if step.fatal:
                return Verdict.give_up()
            if step.code is not None and step.error is not None:
                if (step.code, step.error) in failed:
                    # the model copied its failed code back; in a 100-question CLEVR build every reply
                    # after such a copy copied it again (7 replies, 1,620 tokens): stop asking
                    step.repeated = True
                    return Verdict.give_up()
                failed.add((step.code, step.error))
            if step.error is None:
                return Verdict.accept()
            return Verdict.retry(prompts.render("api_retry", error=step.error, test_call=step.test_call, name=name))

        def announce(attempt: int) -> None:
            if not sample:
                self.on_event(f"implementing {name} (attempt {attempt}/{loop.max_steps})")
            elif loop.max_steps == 1:
                self.on_event(f"implementing {name} (sample {sample + 1})")
            else:
                self.on_event(f"implementing {name} (sample {sample + 1}, reply {attempt}/{loop.max_steps})")

        end = loop.run(messages, judge, report.cost, on_step=announce, first_step=first_step)
        return end, last[0] if last else _Step(error="no attempt was made")

    def _store_implementation(self, name: str, step: _Step, report: ImplementationReport) -> None:
        assert step.code is not None
        self.log.implemented(name, step.code, step.dependencies)
        report.implemented.append(name)
        self.on_event(f"implemented {name}")

    # ------------------------------------------------------------------ generate-and-test

    def _searchable(self, record: FunctionRecord) -> bool:
        return self.search.active and self._verifier(record) is not None

    def _verifier(self, record: FunctionRecord) -> tuple[HelperVerifier, SearchRule] | None:
        """Ground truth for a name that makes a checkable claim, else outcomes where they can judge it."""
        if self.verifier is not None and self.verifier.claim(record.name, record.signature) is not None:
            return self.verifier, FIRST_PASS
        if self.outcome is not None and self.outcome.claim(record.name, record.signature) is not None:
            return self.outcome, self.outcome.rule
        return None

    def _search(self, record: FunctionRecord, stack: list[str], context: TestContext,
                report: ImplementationReport) -> bool:
        """Sampled implementations until one passes the cases of the helper's claim (or, judged by
        outcome, the best of them)."""
        chosen = self._verifier(record)
        assert chosen is not None
        (verifier, rule), name = chosen, record.name
        numbered = [attempts_made(self.store, record)]  # attempts recorded so far, a resumed search's too
        fatal: list[_Step] = []

        convention = verifier.convention(name, record.signature)

        def sample(index: int, failures: Sequence[str], closest: str | None) -> Sample:
            messages = self._opening(record, convention)
            if closest is not None:
                messages += [{"role": "assistant", "content": f"```python\n{closest}```"},
                             {"role": "user", "content": prompts.render(rule.retry_template, name=name,
                                                                        failures=list(failures)[:3])}]
            base = self._loop_for(record, convention)
            sampling = base.sampling if index == 0 else dataclasses.replace(
                base.sampling, first_temperature=self.search.temperature)
            steps = base.max_steps if index == 0 else min(base.max_steps, SAMPLE_ATTEMPTS)
            loop = dataclasses.replace(base, sampling=sampling, max_steps=steps, seed=None if index == 0 else self.search.seed + index)
            end, step = self._converse(record, messages, loop, stack, context, report, numbered_from=numbered[0],
                                       sample=index)
            numbered[0] += end.steps
            if step.fatal:
                fatal.append(step)
            return Sample(step.code if end.done else None, tuple(step.dependencies), step.error)

        def check(candidate: Sample) -> CaseCheck:
            return verifier.verify(name, record.signature, record.docstring, candidate.code or "",
                                   candidate.dependencies)

        claim = verifier.claim(name, record.signature) or ""
        found = search(sample, check, self.search, claim, on_event=lambda m: self.on_event(f"{name}: {m}"), rule=rule)
        if verifier is self.outcome and self.outcome is not None:
            found.record.outcome = self.outcome.evidence(name)
        report.searches[name] = found.record
        self.log.searched(name, found.record.to_dict())
        if found.sample is not None:
            self._store_implementation(name, _Step(code=found.sample.code, dependencies=list(found.sample.dependencies)),
                                       report)
            return True
        if fatal and found.closest is None and found.record.samples == 1:
            self._fail(name, fatal[-1].error or "failed", report)
        elif fatal and found.closest is None:  # one sample's recursion is not the whole search's reason
            self._fail(name, f"no working implementation in {found.record.samples} samples; {len(fatal)} could "
                             f"not be tried, the last: {fatal[-1].error}", report)
        elif found.closest is None:
            self._fail(name, f"no working implementation in {found.record.samples} samples", report)
        elif rule is not FIRST_PASS:
            self._fail(name, f"no implementation's programs were right as often as programs without it in "
                             f"{found.record.samples} samples; the closest: {found.record.closest_failures[0]}", report)
        else:
            self._fail(name, f"no implementation passed the ground-truth cases of its claim ({claim}) in "
                             f"{found.record.samples} samples; the closest: {found.record.closest_failures[0]}", report)
        return False

    def _try(self, name: str, reply: str, stack: list[str], context: TestContext,
             report: ImplementationReport) -> _Step:
        try:
            code = parse_implementation(reply, name)
            check_library_source(name, code)
            calls = called_names(code)
        except (StubFormatError, SyntaxError, LibrarySourceError) as exc:
            return _Step(error=str(exc))
        if len(code) > MAX_CODE_CHARS:  # the helper rules' bound: the code runs before every program
            return _Step(error=f"the implementation has {len(code):,} characters; write it in at most {MAX_CODE_CHARS:,}")
        recursion = recursion_problem(name, calls)
        if recursion is not None:
            return _Step(code=code, error=recursion, fatal=True)
        library = [c for c in calls if c in self.store]
        for dependency in library:
            if dependency in stack:
                return _Step(code=code, error=cycle_text([*stack[stack.index(dependency):], dependency]), fatal=True)
            if not self._implement(dependency, stack, context, report):
                reason = self.store.current(dependency).last_error
                return _Step(code=code, error=f"`{dependency}` is not available ({reason}); "
                                               f"implement `{name}` without calling it")
        current = self.store.current(name)
        test = build_test_call(name, current.signature, question=context.question, words=context.words,
                               docstring=current.docstring)
        namespace = {**context.namespace, **library_namespace(self.store), name: LibraryFunction(name, code)}
        result = check_infrastructure(self.executor(test.code, namespace))
        # a count returned as the boxes it counts ran, and went on to be judged by programs and cases
        error = result.error or ((mismatch := return_mismatch(current.signature, result.value))
                                 and f"it returned {mismatch}: return what the signature says")
        if error:
            return _Step(code=code, error=error, test_call=test.call, dependencies=library)
        return _Step(code=code, test_call=test.call, test_result=repr(result.value)[:500], dependencies=library)

    def _fail(self, name: str, reason: str, report: ImplementationReport) -> None:
        self.log.failed(name, reason)
        report.failed[name] = reason
        self.on_event(f"failed {name}: {one_line(reason, 120)}")

    def _implemented_names(self, *, exclude: str) -> set[str]:
        return {f.name for f in self.store.functions([FunctionStatus.ADMITTED, FunctionStatus.CANDIDATE])
                if f.name != exclude}

    def _api_text(self, *, exclude: str) -> str:
        """Predefined modules, implemented functions, and proposed signatures still to come."""
        shown = [f for f in self.store.functions([FunctionStatus.ADMITTED, FunctionStatus.CANDIDATE, FunctionStatus.PROPOSED])
                 if f.name != exclude]
        return render_api(shown, **self.api_options)


@dataclass
class _Step:
    code: str | None = None
    error: str | None = None
    test_call: str | None = None
    test_result: str | None = None
    dependencies: list[str] = field(default_factory=list)
    fatal: bool = False
    repeated: bool = False  # the same code and error as an earlier reply of its conversation


def _prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)

