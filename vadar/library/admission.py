"""Admit a new helper only on evidence that it makes answers better, not merely that it runs.

For every question of the batch that proposed the helpers, the Program agent writes one program
*with* the batch's candidate helpers and one *without* them. A question's reference answer is its
gold answer (`labelled` mode) or, with questions only (`unlabelled` mode), the answer two
independent programs written *without* the candidates agree on (the one above and one sampled at
a higher temperature); where they disagree the question gives no evidence. A candidate is admitted when programs
used it (directly or through another helper), at least one of them is right, and they are right
at least as often as the same questions answered without the candidates. A rejected candidate
with wrong answers gets one repair: the API agent sees the questions, expected and given answers;
the programs that used it run again with the new version, and the rule is applied again.
Every program and decision is stored with its evidence (`api_store.evidence`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from api_store import ApiStore, FunctionRecord
from base_modules.module import ModuleSet
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Dataset, Question
from vadar.agents.api import TestContext
from vadar.programs.outcome import Executor, ProgramOutcome, check_infrastructure
from vadar.agents.program import ProgramAgent, program_error
from vadar.programs.stubs import StubFormatError, called_names
from vadar.programs.answers import normalize_answer
from vadar.programs.api_text import render_api, with_regions
from vadar.library.checks import BehaviourChecks, CheckResult
from vadar.programs.namespace import library_functions, program_namespace
from vadar.library.truth_checks import TruthChecks, TruthResult

MODES = ("labelled", "unlabelled", "off")

Repairer = Callable[[str, Sequence[Mapping[str, Any]], TestContext], bool]


@dataclass
class QuestionEvidence:
    """One build question: the programs written with and without the candidates, and the reference."""

    question: Question
    without: ProgramOutcome
    with_: ProgramOutcome
    reference: str | None = None
    uses: set[str] = field(default_factory=set)  # candidates the 'with' program reached

    def score(self, outcome: ProgramOutcome) -> float:
        if self.reference is None or outcome.error is not None:
            return 0.0
        return score_answer(outcome.answer, self.reference, self.question.answer_type,
                            self.question.metric)


@dataclass
class AdmissionReport:
    admitted: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    repaired: list[str] = field(default_factory=list)
    programs: int = 0


class Admission:
    """Decides which implemented-but-unverified helpers join the library."""

    def __init__(self, store: ApiStore, agent: ProgramAgent, executor: Executor, *, mode: str = "labelled",
                 sampler: ProgramAgent | None = None, repair: Repairer | None = None,
                 checks: BehaviourChecks | None = None, batch_id: int | None = None,
                 truth: TruthChecks | None = None, min_uses: int = 1,
                 on_event: Callable[[str], None] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"admission mode must be one of {MODES}, got {mode!r}")
        self.store, self.agent, self.executor, self.mode = store, agent, executor, mode
        self.sampler = sampler or agent
        self.repair = repair
        self.checks = checks if mode == "unlabelled" else None  # gold answers need no proxy
        self.truth, self.min_uses = truth, min_uses
        self._truth_results: dict[str, TruthResult] = {}
        self.batch_id = batch_id
        self.on_event = on_event or (lambda message: None)

    def decide(self, candidates: Sequence[FunctionRecord], questions: Sequence[Question], dataset: Dataset,
               modules: ModuleSet, contexts: Sequence[TestContext]) -> AdmissionReport:
        report = AdmissionReport()
        names = {c.name for c in candidates}
        if not candidates or self.mode == "off":
            return report
        before = [f for f in self.store.functions("implemented") if f.name not in names]
        evidence = [self._question(q, dataset, modules, before, candidates, report) for q in questions]
        image_namespace = program_namespace(dataset.image(questions[0]), modules) if questions else {}
        self._truth_results = {}
        for candidate in candidates:
            check = self._check(candidate, [*before, *candidates], image_namespace)
            truth = self._truth(candidate.name, [*before, *candidates], dataset, modules, questions)
            verdict = self._judge(candidate.name, evidence, check, truth)
            if verdict is not None and self.repair is not None and verdict["cases"]:
                verdict = self._repair(candidate.name, verdict, evidence, dataset, modules, before,
                                       contexts, report, check, image_namespace, questions)
            if verdict is None:
                report.admitted.append(candidate.name)
            else:
                report.rejected[candidate.name] = verdict["reason"]
        self._drop_dependents_of_rejected(report)
        for name in report.admitted:
            self.store.record_decision(name, "admitted", mode=self.mode, evidence=self._summary(name, evidence))
        for name, reason in report.rejected.items():
            self.store.record_decision(name, "rejected", mode=self.mode,
                                       evidence={"reason": reason, **self._summary(name, evidence)})
            self.store.mark_failed(name, f"not admitted: {reason}")
            self.on_event(f"rejected {name}: {reason}")
        return report

    # ----------------------------------------------------------------- evidence

    def _question(self, question: Question, dataset: Dataset, modules: ModuleSet, before: list[FunctionRecord],
                  candidates: Sequence[FunctionRecord], report: AdmissionReport) -> QuestionEvidence:
        image = dataset.image(question)
        self.on_event(f"checking helpers on question {question.question_id}")

        def solve(agent: ProgramAgent, library: list[FunctionRecord]) -> ProgramOutcome:
            return agent.solve(question.question, with_regions(render_api(library), question.regions),
                               program_namespace(image, modules, library, question.regions))

        without = solve(self.agent, before)
        library = [*before, *candidates]
        with_ = solve(self.agent, library)
        item = QuestionEvidence(question, without, with_, uses=self._reached(with_.program, candidates))
        outcomes = {"without": without, "with": with_}
        if self.mode == "labelled" and question.answer is not None:
            item.reference = str(question.answer)
        else:  # a second program without the candidates: the reference must not lean on them
            outcomes["sample"] = solve(self.sampler, before)
            item.reference = majority([without, outcomes["sample"]])
        for variant, outcome in outcomes.items():
            library = [*before, *candidates] if variant == "with" else before
            self._record(item, variant, outcome, self._reached(outcome.program, library))
        report.programs += len(outcomes)
        return item

    def _reached(self, program: str | None, candidates: Sequence[FunctionRecord]) -> set[str]:
        """Functions of `candidates` a program calls, directly or through the helpers it calls."""
        if not program:
            return set()
        try:
            pending = list(called_names(program))
        except (SyntaxError, StubFormatError):
            return set()
        by_name = {c.name: c for c in candidates}
        reached: set[str] = set()
        while pending:
            name = pending.pop()
            if name in by_name and name not in reached:
                reached.add(name)
                pending += list(by_name[name].dependencies)
        return reached

    def _record(self, item: QuestionEvidence, variant: str, outcome: ProgramOutcome, uses: set[str]) -> None:
        judged = item.reference is not None
        self.store.record_verified_program(
            batch_id=self.batch_id, question_id=item.question.question_id, question=item.question.question,
            variant=variant, code=outcome.program, answer=outcome.answer, gold=item.reference,
            error=outcome.error, correct=(item.score(outcome) >= 1.0) if judged else None, uses=uses)

    # ----------------------------------------------------------------- the rule

    def _check(self, candidate: FunctionRecord, library: list[FunctionRecord],
               namespace: Mapping[str, Any]) -> CheckResult | None:
        if self.checks is None or not namespace:
            return None
        self.on_event(f"writing a behaviour check for {candidate.name}")
        return self.checks.run(self.store.current(candidate.name), library, namespace)

    def _truth(self, name: str, library: list[FunctionRecord], dataset: Dataset, modules: ModuleSet,
               questions: Sequence[Question]) -> TruthResult | None:
        if self.truth is None:
            return None
        result = self.truth.check(self.store.current(name), library, dataset, modules, questions)
        self._truth_results[name] = result
        return result

    def _judge(self, name: str, evidence: Sequence[QuestionEvidence],
               check: CheckResult | None = None, truth: TruthResult | None = None) -> dict[str, Any] | None:
        """None to admit, else the reason and the wrong cases (for a repair).

        Programs using the helper must be right more often than without it; an equal score is
        enough only for a helper whose ground-truth check passed (a few yes/no questions answered
        alike by chance are no evidence). At least `min_uses` programs must have used it.
        """
        if check is not None and check.passed is False:
            return {"reason": f"its behaviour check failed: {check.error}",
                    "cases": [{"question": f"behaviour check:\n{check.code}", "expected": "every assertion holds",
                               "got": check.error}]}
        if truth is not None and truth.passed is False:
            return {"reason": f"its ground-truth check failed: {truth.failures[0]}",
                    "cases": [{"question": f"ground-truth check ({truth.claim})", "expected": "the true objects",
                               "got": failure} for failure in truth.failures[:3]]}
        used = [e for e in evidence if name in e.uses]
        if not used:
            return {"reason": "no program on its batch used it", "cases": []}
        judged = [e for e in used if e.reference is not None]
        right_with = sum(e.score(e.with_) for e in judged)
        right_without = sum(e.score(e.without) for e in judged)
        verified = truth is not None and truth.passed is True
        better = right_with > right_without or (verified and right_with >= right_without)
        if len(used) >= self.min_uses and judged and right_with >= 1 and better:
            return None
        cases = [{"question": e.question.question, "expected": e.reference,
                  "got": e.with_.error or e.with_.answer} for e in judged if e.score(e.with_) < 1.0]
        if not judged:
            reason = "no reference answer to check it against"
        elif len(used) < self.min_uses:
            reason = f"used by {len(used)} programs, fewer than the {self.min_uses} needed as evidence"
        else:
            reason = _compared(right_with, right_without, len(judged))
        return {"reason": reason, "cases": cases}

    def _repair(self, name: str, verdict: dict[str, Any], evidence: Sequence[QuestionEvidence], dataset: Dataset,
                modules: ModuleSet, before: list[FunctionRecord], contexts: Sequence[TestContext],
                report: AdmissionReport, check: CheckResult | None = None,
                image_namespace: Mapping[str, Any] | None = None,
                questions: Sequence[Question] = ()) -> dict[str, Any] | None:
        self.store.record_decision(name, "repair", mode=self.mode, evidence=verdict)
        self.on_event(f"repairing {name}: {verdict['reason']}")
        if not self.repair or not self.repair(name, verdict["cases"][:3], contexts[0]):
            return verdict
        report.repaired.append(name)
        library = [*before, *[f for f in self.store.functions("implemented") if f.name not in {b.name for b in before}]]
        for item in evidence:
            if name in item.uses and item.with_.program:
                item.with_ = self._rerun(item.with_, item.question, dataset, modules, library)
                self._record(item, "with", item.with_, self._reached(item.with_.program, library))
        if check is not None and check.passed is False and check.code:  # the same check, the new version
            result = check_infrastructure(self.executor(
                check.code + "\nfinal_result = True\n", {**(image_namespace or {}), **library_functions(library)}))
            check = CheckResult(result.error is None, check.code, result.error)
        truth = self._truth(name, library, dataset, modules, questions)
        return self._judge(name, evidence, check, truth)

    def _rerun(self, outcome: ProgramOutcome, question: Question, dataset: Dataset, modules: ModuleSet,
               library: list[FunctionRecord]) -> ProgramOutcome:
        """The same program text, run again with the repaired helper (no new LLM reply)."""
        namespace = program_namespace(dataset.image(question), modules, library, question.regions)
        result = check_infrastructure(self.executor(outcome.program or "", namespace))
        error = program_error(result)
        return ProgramOutcome(answer=normalize_answer(result.value) if error is None else outcome.answer,
                              program=outcome.program, error=error, cost=outcome.cost, calls=list(result.calls))

    def _drop_dependents_of_rejected(self, report: AdmissionReport) -> None:
        changed = True
        while changed:
            changed = False
            for name in list(report.admitted):
                bad = [d for d in self.store.current(name).dependencies if d in report.rejected]
                if bad:
                    report.admitted.remove(name)
                    report.rejected[name] = f"depends on {bad[0]}, which was not admitted"
                    changed = True

    def _summary(self, name: str, evidence: Sequence[QuestionEvidence]) -> dict[str, Any]:
        used = [e for e in evidence if name in e.uses]
        truth = self._truth_results.get(name)
        return {"origin": "proposal", "questions": len(evidence), "used_by": [e.question.question_id for e in used],
                "right_with": sum(e.score(e.with_) for e in used),
                "right_without": sum(e.score(e.without) for e in used),
                **({"truth_check": truth.to_dict()} if truth is not None else {})}


def majority(outcomes: Any) -> str | None:
    """The answer at least two working programs agree on, or None (no reference, no judgement)."""
    answers = Counter(str(o.answer) for o in outcomes if o.error is None)
    if not answers:
        return None
    answer, count = answers.most_common(1)[0]
    return answer if count >= 2 else None


def retire_harmful(store: ApiStore, *, min_uses: int, below: float) -> dict[str, str]:
    """Retire admitted functions whose programs on build questions are mostly wrong.

    Later batches keep writing programs that call older functions; a function used by at least
    `min_uses` judged programs of which fewer than `below` were right leaves the prompts (its
    versions stay in history, with a `retired` decision and the figures).
    """
    retired = {}
    admitted = {d.name for d in store.decisions() if d.decision == "admitted" and d.mode != "hand"}
    for name, stats in store.function_stats().items():
        if name not in admitted or stats.judged < min_uses or (stats.accuracy or 0.0) >= below:
            continue
        if store.current(name).status != "implemented":
            continue
        reason = f"programs using it were right {stats.correct} of {stats.judged} times"
        store.record_decision(name, "retired", mode="stats", evidence={
            "reason": reason, "used": stats.used, "errors": stats.errors, "correct": stats.correct,
            "judged": stats.judged})
        store.mark_failed(name, f"retired: {reason}")
        retired[name] = reason
    return retired


def _compared(with_: float, without: float, questions: int) -> str:
    """Counts of right answers; a score sum when numeric answers earned partial credit."""
    if float(with_).is_integer() and float(without).is_integer():
        return f"programs using it were right {with_:g} of {questions} times, {without:g} without it"
    return (f"programs using it scored {with_:.2f} on {questions} questions, {without:.2f} without it "
            "(1 per right answer, partial credit for numbers)")
