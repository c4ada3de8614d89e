"""Search by outcome: a helper whose name claims nothing ground truth can check, judged by the gold
answers of the build questions it was proposed for.

A count, a filter, a superlative or a composition makes no claim `vadar.library.claims` can test on
a scene, yet the batch's gold answers can judge it: the programs that call it must be right. For the
first working sample the Program agent writes one program per build question of the batch, with
that sample in the library (only those needing a step the helper's name covers, when any does:
`_count_objects` is not written ten programs for ten relation questions); the questions whose programs call the helper (directly or through
another helper) are its support, weighed as the gate weighs evidence (`sources.success_weight`: a
yes/no question counts half, being right half the time by chance). Below `min_support` the helper
is kept as the greedy implementation (no search: a couple of yes/no answers decide nothing; the
gate would refuse it for too few uses), and programs stop as soon as the questions left could not
reach the minimum (they are the search's most costly part: half of a 20-question CLEVR build's
model time). Otherwise the same programs
run again with each later sample (no LLM reply: only the helper's body changes). A sample right on
every supporting question is kept at once; else the search keeps the sample whose programs are
right most often, when that is at least as often as without the helper. Programs without the helper
(the same requests as the gate's programs without the batch's candidates, so the response cache
answers those at admission) are written only as a sample's judgement needs them: until then each
supporting question counts as answered right without it, the sample's worst case, and one is
written at a time while the sample falls short of that (`vadar.library.outcome_rule` does the same
at the gate). A sample right everywhere needs none.

Where other build scenes know a supporting question's answer (`vadar.library.scene_check`), a
program right on its own scene counts as right only if it is right on those too, with the helper and
without it alike: a yes/no answer is right half the time by chance.

A question-shape helper is first run on its ground-truth cases where the scenes have them
(`vadar.library.shape_truth`: every value of its relation or attribute parameter): a sample wrong
there is refused before any program runs, and the next sample is shown the failing cases, since
the build questions may never take the branch it gets wrong.

Only the batch's own questions are read: build questions, never a held-back or scored one. A sample
whose body never reads one of its parameters is refused before any program runs: the gate refuses
it whatever its programs answer (a CLEVR build spent 16 samples and their programs each on three
attribute helpers that ignored their box, then saw all three refused at the gate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from api_store import ApiStore, FunctionRecord
from base_modules.module import ModuleSet
from base_modules.view_modules import ViewModuleSet
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Dataset, Question
from vadar.agents.helper_search import HelperVerifier, OutcomeEvidence, SearchRule
from vadar.agents.program import ProgramAgent
from vadar.library.admission import gate_program
from vadar.library.candidates import Candidate, Route
from vadar.library.coverage import helper_steps, steps_of
from vadar.library.rules import unread_parameter
from vadar.library.scene_check import SceneChecker
from vadar.library.shape_helpers import shape_helper
from vadar.library.sources import support as evidence_weight
from vadar.llm.usage import usage_scope
from vadar.programs.calls import helpers_reached
from vadar.programs.question_context import QuestionContext
from vadar.programs.outcome import Executor, ProgramOutcome, run_program
from vadar.programs.question_form import parse_question
from vadar.text import one_line

OUTCOME_CLAIM = "outcome"  # the claim label a search by outcome is recorded under
SEARCH_PROGRAMS = "search programs"  # the usage scope of its programs (`runs.build_cost`)


@dataclass
class OutcomeResult:
    """One sample judged on its supporting questions (a `CaseCheck` of the search).

    `passed`: True when its programs are right on every supporting question, None when there are
    fewer than the minimum (no evidence: the greedy sample is kept), else False."""

    passed: bool | None
    cases: int
    failures: list[str] = field(default_factory=list)
    right: float = 0.0
    right_without: float = 0.0
    refused: bool = False  # the body breaks a rule the gate checks first: never run, never kept

    @property
    def enough(self) -> bool:
        """Kept as the best sample only when its programs are right at least as often as without it."""
        return self.passed is not None and not self.refused and self.right >= self.right_without


def _closeness(result: OutcomeResult) -> float:
    return result.right


def _enough(result: OutcomeResult) -> bool:
    return result.enough


@dataclass
class _Support:
    """What one helper's samples are judged on: its supporting questions and their programs."""

    questions: list[Question]
    programs: dict[str, str]  # question id -> the program written with the first sample
    asked: int = 0  # the questions a program was written for (fewer once the minimum is out of reach)
    without: dict[str, float] = field(default_factory=dict)  # question id -> its program's score without it
    right: list[float] = field(default_factory=list)

    @property
    def weight(self) -> float:
        """The support as the gate weighs it: a yes/no question counts half."""
        return evidence_weight([q.answer for q in self.questions])

    @property
    def right_without(self) -> float:
        """Programs without the helper right on the supporting questions, a question none was written
        for counting right (the worst case of a sample compared with it)."""
        return sum(self.without.get(q.question_id, 1.0) for q in self.questions)

    def unasked(self) -> list[Question]:
        return [q for q in self.questions if q.question_id not in self.without]


class OutcomeVerifier:
    """The API agent's verifier for a helper without a checkable claim (`ComparingVerifier`)."""

    rule = SearchRule(closeness=_closeness, keep_best=_enough, retry_template="api_outcome_retry")

    def __init__(self, writer: ProgramAgent, store: ApiStore, executor: Executor, dataset: Dataset,
                 modules: ModuleSet, questions: Sequence[Question], *, min_support: int,
                 on_event: Callable[[str], None] = lambda message: None,
                 scenes: SceneChecker | None = None, truth: HelperVerifier | None = None,
                 view_modules: ViewModuleSet | None = None) -> None:
        self.writer, self.store, self.executor = writer, store, executor
        self.truth = truth  # ground truth for a question-shape helper: every value of its parameters first
        self.dataset, self.modules, self.min_support, self.on_event = dataset, modules, min_support, on_event
        self.context = QuestionContext(dataset, modules, view_modules)  # as the gate's programs see a question
        self.scenes = scenes  # a right program must be right on other build scenes of its question too
        self.questions = [q for q in questions if q.answer is not None]  # only gold answers judge
        self._support: dict[str, _Support] = {}

    def claim(self, name: str, signature: str) -> str | None:
        """Judged by outcome only when the batch has enough labelled questions to reach the minimum."""
        return OUTCOME_CLAIM if len(self.questions) >= self.min_support else None

    def convention(self, name: str, signature: str) -> str | None:
        return None

    def verify(self, name: str, signature: str, docstring: str, code: str,
               dependencies: Sequence[str]) -> OutcomeResult:
        unread = unread_parameter(code)
        if unread is not None:  # the gate refuses it whatever its programs answer: no program is spent on it
            return OutcomeResult(False, 0, [unread], refused=True)
        if self.truth is not None and shape_helper(name) is not None:
            checked = self.truth.verify(name, signature, docstring, code, dependencies)
            if checked.passed is False:  # the gate would refuse it: no program is spent on it
                return OutcomeResult(False, checked.cases, [f"on a ground-truth case: {f.split(': ', 1)[-1]}"
                                                            for f in checked.failures], refused=True)
        helper = Candidate(Route.PROPOSAL, name, signature, docstring, code, dependencies=tuple(dependencies))
        library = [*[f for f in self.store.library(with_candidates=True) if f.name != name], helper]
        support = self._support.get(name)
        if support is None:
            support, answers = self._first(name, library, self._serving(name, signature))
            self._support[name] = support
            if support.weight < self.min_support:
                return OutcomeResult(None, len(support.questions))
        else:
            answers = {q.question_id: self._rerun(q, support.programs[q.question_id], library)
                       for q in support.questions}
        return self._judged(name, support, answers, library)

    def evidence(self, name: str) -> OutcomeEvidence | None:
        support = self._support.get(name)
        if support is None:
            return None
        return OutcomeEvidence(len(support.questions), self.min_support, support.right_without,
                               tuple(support.right), tuple(q.question_id for q in support.questions), support.asked,
                               support.weight, len(support.unasked()))

    # ----------------------------------------------------------------- programs

    def _serving(self, name: str, signature: str) -> list[Question]:
        """The labelled questions needing a step the helper's name covers (`coverage.helper_steps`),
        none when no question needs one (no program is written: the greedy sample is kept for the
        gate to judge); all of them when its name covers no step."""
        steps = helper_steps(name, signature)
        if not steps:
            return list(self.questions)
        return [q for q in self.questions if steps & set(steps_of(parse_question(q.question)))]

    def _first(self, name: str, library: list[FunctionRecord | Candidate],
               questions: Sequence[Question]) -> tuple[_Support, dict[str, object]]:
        """One program per question with the first sample in the library; those that call it."""
        support, answers = _Support([], {}), {}
        dependencies = {f.name: tuple(f.dependencies) for f in library}
        for position, question in enumerate(questions):
            if support.weight + evidence_weight([q.answer for q in questions[position:]]) < self.min_support:
                break  # the questions left cannot bring it to the minimum: no search, no more programs
            self.on_event(f"{name}: writing a program for question {question.question_id} with it")
            outcome = self._solve(question, library)
            support.asked = position + 1
            if outcome.program and name in helpers_reached(outcome.program, dependencies):
                support.questions.append(question)
                support.programs[question.question_id] = outcome.program
                answers[question.question_id] = None if outcome.error is not None else outcome.answer
        return support, answers

    def _without(self, name: str, support: _Support, question: Question, before: list[FunctionRecord]) -> None:
        """One supporting question answered by a program written without the batch's candidates (`before`)."""
        self.on_event(f"{name}: writing a program for question {question.question_id} without it")
        outcome = self._solve(question, before)
        earned = _score(question, None if outcome.error is not None else outcome.answer)
        support.without[question.question_id] = (
            earned if earned < 1.0 or self._elsewhere(question, outcome.program, before) is None else 0.0)

    def _elsewhere(self, question: Question, program: str | None,
                   library: Sequence[FunctionRecord | Candidate]) -> str | None:
        """Why a program right on its question's scene was right by chance (wrong on another build
        scene of the question), or None: it holds there too, or no other scene can tell."""
        if self.scenes is None or not program:
            return None
        check = self.scenes.check(question, program, library)  # type: ignore[arg-type]
        if check is None or check.holds:
            return None
        wrong = check.wrong[0]
        return (f"right here, but on another scene, where the answer is {wrong.gold!r}, it answered "
                f"{one_line(wrong.answer or wrong.error or '', 80)}")

    def _solve(self, question: Question, library: Sequence[FunctionRecord | Candidate]) -> ProgramOutcome:
        """As the gate's programs are written (`admission.gate_program`)."""
        with usage_scope(SEARCH_PROGRAMS):
            return gate_program(self.writer, question, self.context, library)

    def _rerun(self, question: Question, program: str, library: list[FunctionRecord | Candidate]) -> object:
        """The same program text with another sample in the library; None when it fails."""
        namespace = self.context.namespace(question, library)  # type: ignore[arg-type]
        run = run_program(self.executor, program, namespace)
        return None if run.error is not None else run.answer

    def _judged(self, name: str, support: _Support, answers: dict[str, object],
                library: Sequence[FunctionRecord | Candidate]) -> OutcomeResult:
        right, failures = 0.0, []
        for question in support.questions:
            answer = answers.get(question.question_id)
            earned = _score(question, answer)
            chance = self._elsewhere(question, support.programs[question.question_id], library) if earned >= 1.0 else None
            if chance is not None:
                earned = 0.0
                failures.append(f"for {one_line(question.question, 160)!r} the program answered {answer!r}, {chance}")
            right += earned
            if earned < 1.0 and chance is None:
                got = "an error" if answer is None else repr(answer)
                failures.append(f"for {one_line(question.question, 160)!r} the program answered {one_line(got, 80)}; "
                                f"the right answer is {question.answer!r}")
        support.right.append(right)
        unasked = support.unasked()
        before = self.store.library() if right < support.right_without and unasked else []
        while right < support.right_without and unasked:  # short of the worst case: ask, one at a time
            self._without(name, support, unasked.pop(0), before)
        return OutcomeResult(not failures, len(support.questions), failures, right, support.right_without)


def _score(question: Question, answer: object) -> float:
    """The question's metric against its gold answer; a failed program earns nothing."""
    if answer is None:
        return 0.0
    try:
        return score_answer(answer, str(question.answer), question.answer_type, question.metric)
    except ValueError:  # an answer the metric cannot read is a wrong one
        return 0.0
