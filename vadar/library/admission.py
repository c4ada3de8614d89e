"""Admit a new helper only on evidence that it makes answers better, not merely that it runs.

For every question of the batch that proposed the helpers, the Program agent writes one program
*with* the batch's candidate helpers and one *without* them. A question's reference answer is its
gold answer (`labelled` mode) or, with questions only (`unlabelled` mode), the answer two
independent programs written *without* the candidates agree on (the one above and one sampled at
a higher temperature); where they disagree the question gives no evidence. In labelled mode a
question whose program with the candidates called none of them judges none, and its program
without them is not written: on generated, warehouse and multi-view builds that was most
questions (95 of 126 over four 30-question builds; 3 of the programs not written now had been
right where the one with the candidates was not), on a CLEVR build none of 42. A candidate is admitted when programs
used it (directly or through another helper), at least one of them is right, and they are right
more often than the same questions answered without the candidates (`vadar.library.outcome_rule`;
labelled, a question whose program with them is right is written its program without them only
when the decision turns on it). A rejected candidate
with wrong answers gets one repair: the API agent sees the questions, expected and given answers;
the programs that used it run again with the new version, and the rule is applied again.
Every program and decision is stored with its evidence (`api_store.evidence`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from api_store import ApiStore, FunctionRecord
from base_modules.module import ModuleSet
from base_modules.view_modules import ViewModuleSet
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Dataset, Question
from vadar.agents.api import TestContext
from vadar.agents.program import ProgramAgent
from vadar.library.candidates import Candidate, Route
from vadar.library.checks import BehaviourChecks, CheckResult
from vadar.library.gate import Gate, TruthCheck, admit, reject
from vadar.library.outcome_rule import OutcomeRule, QuestionEvidence
from vadar.library.composed_examples import fallback_example
from vadar.library.shape_helpers import catalogue_calls, shape_helpers_first
from vadar.library.retrieval import worked_examples
from vadar.library.problems import BehaviourFailed, Case, DependencyRejected, NotBetter, Problem
from vadar.library.truth_checks import TruthChecks, TruthResult
from vadar.programs.api_text import render_api, with_regions
from vadar.programs.namespace import library_functions, program_namespace
from vadar.programs.outcome import Executor, ProgramOutcome, check_infrastructure, run_program
from vadar.programs.question_context import QuestionContext
from vadar.llm.usage import usage_scope
from vadar.programs.calls import helpers_reached

MODES = ("labelled", "unlabelled", "off")
GATE_PROGRAMS = "gate programs"  # the usage scope of the gate's programs (`runs.build_cost`)

Repairer = Callable[[str, Sequence[Mapping[str, Any]], TestContext], bool]


def gate_program(agent: ProgramAgent, question: Question, context: QuestionContext,
                 library: Sequence[FunctionRecord | Candidate]) -> ProgramOutcome:
    """A program for `question` as the gate writes it: the whole library's API text with the question's
    regions, the library in the namespace (the search by outcome writes the same requests, so the
    response cache answers the gate's programs again). The question's shape helpers come first,
    each with the catalogue's example call, and the worked example is the catalogue's program for
    the question's shape where a library helper answers it in one call, else one composed of its
    relation helpers (`composed_examples`)."""
    shown = shape_helpers_first(library, question.question)
    calls = catalogue_calls(f.name for f in shown)  # how to call a shape helper, before any program has
    worked = worked_examples([fallback_example(question.question, calls, shown)]) or context.fixed_example(question)
    api = render_api(shown, examples=calls, **context.api_options(question))  # type: ignore[arg-type]
    return agent.solve(question.question, with_regions(api, question.regions),
                       context.namespace(question, library), worked)  # type: ignore[arg-type]


@dataclass
class AdmissionReport:
    """What one batch's admission decided; `rejected` maps a name to the reason in the log."""

    admitted: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    repaired: list[str] = field(default_factory=list)
    programs: int = 0


@dataclass(frozen=True)
class AdmissionSetup:
    """How a batch's admission runs: its mode, the helpers it calls on, its limit, where it reports.

    `sampler` writes the second program of an unlabelled reference (default: the agent itself);
    `repair` asks the API agent for one new version; `checks` are the behaviour checks
    (unlabelled mode only); `truth` the ground-truth checks, with cases from the scenes of
    `truth_scenes` (default: the batch's questions). A build passes the scenes its search drew cases
    from: rechecked on the batch's own scenes alone, fewer cases, a right `_distance_between` (the
    pinhole distance, mean credit over 0.9 on 48 cases of six warehouse scenes) fell under the level
    on the three scenes of its batch and was refused.
    """

    mode: str = "labelled"
    sampler: ProgramAgent | None = None
    repair: Repairer | None = None
    checks: BehaviourChecks | None = None
    truth: TruthChecks | None = None
    truth_scenes: Sequence[Question] | None = None
    min_uses: int = 1
    batch_id: int | None = None
    on_event: Callable[[str], None] | None = None
    view_modules: ViewModuleSet | None = None  # the multi-view modules, where a question has several frames


@dataclass(frozen=True)
class _Judging:
    """One `decide`: the batch's questions, their evidence, and what the gates of the batch share."""

    questions: Sequence[Question]
    dataset: Dataset
    modules: ModuleSet
    contexts: Sequence[TestContext]
    before: list[FunctionRecord]  # the library without the candidates
    evidence: Sequence[QuestionEvidence]
    namespace: Mapping[str, Any]  # an image's namespace, for behaviour checks
    checked: dict[str, CheckResult]  # behaviour checks written so far, by helper
    report: AdmissionReport
    truth: dict[tuple[str, str], TruthResult]  # ground-truth checks run so far, by helper and body


class Admission:
    """Decides which candidates join the library, through the admission gate."""

    def __init__(self, store: ApiStore, agent: ProgramAgent, executor: Executor,
                 setup: AdmissionSetup = AdmissionSetup()) -> None:
        if setup.mode not in MODES:
            raise ValueError(f"admission mode must be one of {MODES}, got {setup.mode!r}")
        self.store, self.agent, self.executor, self.mode = store, agent, executor, setup.mode
        self.sampler = setup.sampler or agent
        self.repair = setup.repair
        self.checks = setup.checks if setup.mode == "unlabelled" else None  # gold answers need no proxy
        self.truth, self.truth_scenes, self.min_uses = setup.truth, setup.truth_scenes, setup.min_uses
        self.batch_id = setup.batch_id
        self.view_modules = setup.view_modules
        self.on_event = setup.on_event or (lambda message: None)

    def decide(self, candidates: Sequence[FunctionRecord], questions: Sequence[Question], dataset: Dataset,
               modules: ModuleSet, contexts: Sequence[TestContext]) -> AdmissionReport:
        report = AdmissionReport()
        if not candidates or self.mode == "off":
            return report
        before = self.store.library()
        truth = TruthCheck(self.truth, dataset, modules, [*before, *candidates], self.truth_scenes or questions)
        confirmed = {record.name for record in candidates if truth.confirms(self._candidate(record.name))}
        evidence = [self._question(q, dataset, modules, before, candidates, report, confirmed) for q in questions]
        judging = _Judging(questions, dataset, modules, contexts, before, evidence,
                           program_namespace(dataset.image(questions[0]), modules) if questions else {}, {}, report,
                           truth.results)
        decided: dict[str, tuple[Candidate, Problem | None]] = {}
        for record in candidates:
            candidate = self._candidate(record.name)
            problem = self._settled(candidate, judging, [*before, *candidates])
            if problem is not None and self.repair is not None and problem.repairable and problem.cases:
                candidate, problem = self._repair(candidate, problem, judging)
            decided[record.name] = (candidate, problem)
        _drop_dependents_of_rejected(decided, self.store)
        for name, (candidate, problem) in decided.items():
            self._summarise(candidate, evidence)
            if problem is None:
                report.admitted.append(name)
                admit(self.store, candidate, library=before, batch_id=self.batch_id, mode=self.mode)
        for name, (candidate, problem) in decided.items():
            if problem is not None:
                report.rejected[name] = problem.log
                reject(self.store, candidate, problem, mode=self.mode)
                self.on_event(f"rejected {name}: {problem.log}")
        return report

    def _candidate(self, name: str) -> Candidate:
        current = self.store.current(name)
        return Candidate(Route.PROPOSAL, current.name, current.signature, current.docstring, current.code or "",
                         dependencies=tuple(current.dependencies))

    def _gate(self, judging: _Judging, library: list[FunctionRecord]) -> Gate:
        """A proposal's checks, in order: its behaviour check (unlabelled), its ground truth, the outcomes."""
        return Gate([BehaviourCheck(self, judging.namespace, library, judging.checked),
                     TruthCheck(self.truth, judging.dataset, judging.modules, library,
                                self.truth_scenes or judging.questions, judging.truth),
                     OutcomeRule(judging.evidence, self.min_uses)])

    # ----------------------------------------------------------------- evidence

    def _question(self, question: Question, dataset: Dataset, modules: ModuleSet, before: list[FunctionRecord],
                  candidates: Sequence[FunctionRecord], report: AdmissionReport,
                  confirmed: AbstractSet[str] = frozenset()) -> QuestionEvidence:
        self.on_event(f"checking helpers on question {question.question_id}")
        with_ = self._program(self.agent, question, dataset, modules, [*before, *candidates])
        uses = self._reached(with_.program, candidates)
        labelled = self.mode == "labelled" and question.answer is not None
        item = QuestionEvidence(question, None, with_, str(question.answer) if labelled else None, uses)
        # A labelled question judges only the candidates its program reached that ground truth has not
        # confirmed (`OutcomeRule`): where there are none, its program without them is not written; where
        # its program with them is right, not yet (`outcome_rule`: it can at most tie)
        needed = bool(uses - confirmed) or not labelled
        item.assumed = needed and labelled and item.score(with_) >= 1.0
        if needed and not item.assumed:
            item.without = self._program(self.agent, question, dataset, modules, before)
        outcomes = {"with": with_} if item.without is None else {"without": item.without, "with": with_}
        if not labelled:  # a second program without the candidates: the reference must not lean on them
            outcomes["sample"] = self._program(self.sampler, question, dataset, modules, before)
            item.reference = scorable_reference(majority([item.without, outcomes["sample"]]), question)
        for variant, outcome in outcomes.items():
            library = [*before, *candidates] if variant == "with" else before
            self._record(item, variant, outcome, self._reached(outcome.program, library))
        report.programs += len(outcomes)
        return item

    def _program(self, agent: ProgramAgent, question: Question, dataset: Dataset, modules: ModuleSet,
                 library: list[FunctionRecord]) -> ProgramOutcome:
        with usage_scope(GATE_PROGRAMS):
            return gate_program(agent, question, QuestionContext(dataset, modules, self.view_modules), library)

    def _settled(self, candidate: Candidate, judging: _Judging, library: list[FunctionRecord]) -> Problem | None:
        """The gate's first problem with `candidate`; where it would refuse it as no better while
        programs without the candidates are assumed right, those are written one at a time until it
        passes or none is left: the decision all of them would give."""
        gate = self._gate(judging, library)
        problem = gate.first_problem(candidate)
        pending = [e for e in judging.evidence if candidate.name in e.uses and e.assumed]
        while isinstance(problem, NotBetter) and pending:
            item = pending.pop(0)
            item.without, item.assumed = self._program(self.agent, item.question, judging.dataset, judging.modules,
                                                       judging.before), False
            self._record(item, "without", item.without, self._reached(item.without.program, judging.before))
            judging.report.programs += 1
            problem = gate.first_problem(candidate)
        return problem

    def _reached(self, program: str | None, candidates: Sequence[FunctionRecord]) -> set[str]:
        """Functions of `candidates` a program calls, directly or through the helpers it calls."""
        return helpers_reached(program, {c.name: c.dependencies for c in candidates})

    def _record(self, item: QuestionEvidence, variant: str, outcome: ProgramOutcome, uses: set[str]) -> None:
        judged = item.reference is not None
        self.store.record_verified_program(
            batch_id=self.batch_id, question_id=item.question.question_id, question=item.question.question,
            variant=variant, code=outcome.program, answer=outcome.answer, gold=item.reference,
            error=outcome.error, correct=(item.score(outcome) >= 1.0) if judged else None, uses=uses)

    # ----------------------------------------------------------------- repair

    def _repair(self, candidate: Candidate, problem: Problem, judging: _Judging) -> tuple[Candidate, Problem | None]:
        """One new implementation, shown the cases; its users' programs run again with it, then the gate."""
        name = candidate.name
        self.store.record_decision(name, "repair", mode=self.mode, evidence={
            "reason": problem.log, "cases": [case.to_dict() for case in problem.cases]})
        self.on_event(f"repairing {name}: {problem.log}")
        if not self.repair or not self.repair(name, [case.to_dict() for case in problem.cases[:3]], judging.contexts[0]):
            return candidate, problem
        judging.report.repaired.append(name)
        library = [*judging.before, *self.store.candidates()]
        for item in judging.evidence:
            if name in item.uses and item.with_.program:
                item.with_ = self._rerun(item.with_, item.question, judging.dataset, judging.modules, library)
                self._record(item, "with", item.with_, self._reached(item.with_.program, library))
        repaired = self._candidate(name)
        return repaired, self._settled(repaired, judging, library)

    def _rerun(self, outcome: ProgramOutcome, question: Question, dataset: Dataset, modules: ModuleSet,
               library: list[FunctionRecord]) -> ProgramOutcome:
        """The same program text, run again with the repaired helper (no new LLM reply)."""
        namespace = QuestionContext(dataset, modules, self.view_modules).namespace(question, library)
        run = run_program(self.executor, outcome.program or "", namespace)
        return ProgramOutcome(answer=run.answer if run.error is None else outcome.answer, program=outcome.program,
                              error=run.error, cost=outcome.cost, calls=list(run.result.calls))

    def _summarise(self, candidate: Candidate, evidence: Sequence[QuestionEvidence]) -> None:
        used = [e for e in evidence if candidate.name in e.uses]
        record = candidate.evidence
        record.questions, record.used_by = len(evidence), [e.question.question_id for e in used]
        record.right_with = sum(e.score(e.with_) for e in used)
        compared = [e for e in used if e.without is not None or e.assumed]
        record.right_without = sum(e.score_without() for e in compared) if compared else None
        record.assumed_ties = sum(e.assumed for e in compared) or None


class BehaviourCheck:
    """The gate's behaviour check (unlabelled mode): assertions the LLM writes from a helper's name and
    docstring, run on its body. After a repair, the same assertions run on the new version."""

    def __init__(self, admission: Admission, namespace: Mapping[str, Any], library: list[FunctionRecord],
                 results: dict[str, CheckResult]) -> None:
        self.admission, self.namespace, self.library = admission, namespace, library
        self.results = results  # shared by the gates of one batch: a repaired helper meets its own check

    def __call__(self, candidate: Candidate) -> Problem | None:
        checks, executor = self.admission.checks, self.admission.executor
        if checks is None or not self.namespace:
            return None
        result = self.results.get(candidate.name)
        if result is None:
            self.admission.on_event(f"writing a behaviour check for {candidate.name}")
            result = checks.run(self.admission.store.current(candidate.name), self.library, self.namespace)
        elif result.passed is False and result.code:  # the same check, the new version
            ran = check_infrastructure(executor(result.code + "\nfinal_result = True\n",
                                                {**self.namespace, **library_functions(self.library)}))
            result = CheckResult(ran.error is None, result.code, ran.error)
        self.results[candidate.name] = result
        if result.passed is not False:
            return None
        return BehaviourFailed(f"its behaviour check failed: {result.error}", cases=(
            Case(f"behaviour check:\n{result.code}", "every assertion holds", result.error or ""),))


def _drop_dependents_of_rejected(decided: dict[str, tuple[Candidate, Problem | None]], store: ApiStore) -> None:
    changed = True
    while changed:
        changed = False
        for name, (candidate, problem) in decided.items():
            if problem is not None:
                continue
            bad = [d for d in store.current(name).dependencies if decided.get(d, (None, None))[1] is not None]
            if bad:
                decided[name] = (candidate, DependencyRejected(f"depends on {bad[0]}, which was not admitted"))
                changed = True


def scorable_reference(answer: str | None, question: Question) -> str | None:
    """An agreed answer the question's metric can score against (two programs agreeing on "nope"
    for a count give no reference), else None."""
    if answer is None:
        return None
    try:
        score_answer(answer, answer, question.answer_type, question.metric)
    except ValueError:
        return None
    return answer


def majority(outcomes: Any) -> str | None:
    """The answer at least two working programs agree on, or None (no reference, no judgement)."""
    answers = Counter(str(o.answer) for o in outcomes if o.error is None)
    if not answers:
        return None
    answer, count = answers.most_common(1)[0]
    return answer if count >= 2 else None
