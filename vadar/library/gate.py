"""The one admission gate: an ordered list of checks, and one place that stores what passes.

Whatever route a helper came by (`vadar.library.candidates.Route`), it is a `Candidate`, and a
`Gate` runs its checks in order: each returns a typed problem (`vadar.library.problems`) or
nothing, and the first problem decides. The routes differ only in which checks they list (a
proposal is judged by the programs that used it, a distilled helper by the programs it must
reproduce) and in what they do with a problem (ask the LLM again, repair, give up). `admit`
stores a helper with its evidence and its rewritten programs as worked examples; `reject`
records why a stored proposal was not admitted. The gate is the only writer of a helper's
`admitted` state: `admit` after the checks, `admit_as_given` for helpers no check judges (written
by hand, or a build that runs with admission off).

The checks every route shares live here: the rule for stored source, reproducing the rewritten
programs' right answers, and the ground-truth check of the helper's claim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from api_store import ApiStore
from base_modules.module import ModuleSet
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Dataset, Question
from vadar.library.candidates import Candidate, Route
from vadar.library.claims import ATTRIBUTE_WORDS, RELATION_WORDS, claim_of, name_words
from vadar.library.problems import AnswersChanged, Case, NameProblem, Problem, SourceProblem, TruthFailed
from vadar.library.truth_checks import TruthChecks, TruthResult
from vadar.programs.calls import helpers_called
from vadar.programs.namespace import program_namespace
from vadar.programs.outcome import Executor, ProgramRun, run_program
from vadar.sandbox import LibrarySourceError, check_library_source

MIN_TRUTH_CASES = 4  # ground-truth cases a helper must pass to be admitted on them (a relation case checks a whole list)


def confirmed(truth_check: Mapping[str, Any]) -> bool:
    """Whether a ground-truth check (`TruthResult.to_dict()`, as a candidate's evidence keeps it)
    passed on at least `MIN_TRUTH_CASES` cases: right by evidence stronger than any batch's outcomes."""
    return truth_check.get("passed") is True and truth_check.get("cases", 0) >= MIN_TRUTH_CASES

REWRITTEN = "rewritten"  # variant of a verified program that is a rewritten source program

Check = Callable[[Candidate], Problem | None]
"""One check of the gate: the problem it finds with a candidate, or None."""


class Gate:
    """Checks run in order; the first problem found decides."""

    def __init__(self, checks: Sequence[Check]) -> None:
        self.checks = list(checks)

    def first_problem(self, candidate: Candidate) -> Problem | None:
        for check in self.checks:
            problem = check(candidate)
            if problem is not None:
                return problem
        return None


def admit(store: ApiStore, candidate: Candidate, *, library: Sequence[Any], batch_id: int | None,
          mode: str) -> None:
    """Store the helper as admitted with its evidence, and its rewritten programs as worked examples.

    A proposal is in the store already (the API agent implemented it as a candidate); other
    routes add it here.
    """
    names = {f.name for f in library}
    with store.transaction():
        if candidate.route is not Route.PROPOSAL:
            store.propose(candidate.name, candidate.signature, candidate.docstring, batch_id=batch_id)
            store.implement(candidate.name, candidate.code, dependencies=sorted(helpers_called(candidate.code, names)),
                            batch_id=batch_id)  # the batch that made it: the validation gate leaves it out with that batch
        store.record_decision(candidate.name, "admitted", mode=mode, evidence=candidate.stored_evidence())
        store.mark_admitted(candidate.name)
        for use in candidate.uses:
            store.record_verified_program(
                batch_id=batch_id, question_id=use.source.question_id, question=use.source.question,
                variant=REWRITTEN, code=use.code, answer=use.source.answer, gold=use.source.gold, error=None,
                correct=True, uses=helpers_called(use.code, names | {candidate.name}))


def admit_as_given(store: ApiStore, names: Sequence[str], *, mode: str) -> None:
    """Admit stored candidates no check judges: helpers written by hand (`mode="hand"`), or a
    build's with admission off (`mode="off"`). Each gets its `admitted` decision."""
    with store.transaction():
        for name in names:
            store.record_decision(name, "admitted", mode=mode)
            store.mark_admitted(name)


def reject(store: ApiStore, candidate: Candidate, problem: Problem, *, mode: str) -> None:
    """Record why a stored candidate was not admitted; it leaves the prompts, its history stays."""
    store.record_decision(candidate.name, "rejected", mode=mode, evidence={
        "reason": problem.log, "problem": type(problem).__name__, **candidate.stored_evidence()})
    store.mark_failed(candidate.name, f"not admitted: {problem.log}")


def scored_right(run: ProgramRun, gold: Any, question: Question) -> bool:
    """A run that answered, and whose answer scores full marks against `gold`."""
    return run.error is None and score_answer(run.answer, gold, question.answer_type, question.metric) >= 1.0


# ----------------------------------------------------------------- checks every route shares


def source_rule(candidate: Candidate) -> Problem | None:
    """The rule for every stored helper: one plain `def`, no decorators, constant defaults."""
    try:
        check_library_source(candidate.name, candidate.code)
    except LibrarySourceError as exc:
        return SourceProblem(str(exc))
    return None


_GROUPS = {"same": "attribute", "attribute": "attribute", "relation": "relation", "relation_test": "relation"}
"""Claim kinds by what their value names: an attribute shared or read, or a relation listed or tested."""


class SaysWhatItFixes:
    """A body that always applies one claim of a library helper says so in its name.

    A distilled CLEVR helper `_filter_objects(image, bbox2, object_prompt)` kept the objects of the
    same color as `bbox2` (it calls `_same_color`), and `_find_object` built on it read an attribute
    of that object: programs for "same material" or "same shape" questions would call them by their
    names. A body calling one helper of a kind (a shared attribute, a relation, one attribute read)
    must name its value (`_objects_same_color`); one calling several of a kind (picked by a
    parameter, as `read = {'color': _color_of_object, ...}[attribute]`) fixes none. What a library
    helper fixes passes on to the helpers that call it: once `_filter_objects_by_color` said its
    color, the next build distilled `_find_object` on it, as misleading as before."""

    def __init__(self, library: Sequence[Any]) -> None:
        self.claims = {f.name: claim for f in library if (claim := claim_of(f)) is not None}
        self.code = {f.name: f.code or "" for f in library}

    def fixes(self, name: str, seen: frozenset[str] = frozenset()) -> dict[str, set[str]]:
        """Group ("attribute", "relation") -> the values `name` always applies: its own claim's,
        else those of every helper it calls (`seen`: the callers above it, a cycle ends there)."""
        claim = self.claims.get(name)
        if claim is not None:
            group = _GROUPS.get(claim.kind)
            return {group: {claim.value}} if group is not None else {}
        found: dict[str, set[str]] = {}
        for called in helpers_called(self.code.get(name, ""), set(self.code)) - seen - {name}:
            for group, values in self.fixes(called, seen | {name}).items():
                found.setdefault(group, set()).update(values)
        return found

    def __call__(self, candidate: Candidate) -> Problem | None:
        values: dict[str, dict[str, str]] = {}
        for called in sorted(helpers_called(candidate.code, set(self.code)) - {candidate.name}):
            for group, fixed in self.fixes(called, frozenset({candidate.name})).items():
                for value in sorted(fixed):
                    values.setdefault(group, {}).setdefault(value, called)
        words = set(name_words(candidate.name))
        said = {ATTRIBUTE_WORDS[w] for w in words if w in ATTRIBUTE_WORDS} | {
            RELATION_WORDS[w] for w in words if w in RELATION_WORDS}
        for group, fixed in values.items():
            if len(fixed) != 1:
                continue
            [(value, helper)] = fixed.items()
            if value not in said:
                return NameProblem(f"the body always uses `{helper}` ({group} {value}), but the name "
                                   f"`{candidate.name}` does not say {value}: programs would call it for the other "
                                   f"{group}s. Put {value} in the name")
        return None


class Reproduces:
    """Every program the candidate came from, rewritten to call it, still gives its right answer.

    `numbered` names questions for the LLM by their number in its request (`question 2 (How many
    ...?)`); the LLM's text never holds the right answer, the log's does.
    """

    def __init__(self, executor: Executor, by_id: Mapping[str, Question], dataset: Dataset, modules: ModuleSet,
                 library: Sequence[Any], numbered: Mapping[str, int] | None = None) -> None:
        self.executor, self.by_id, self.dataset, self.modules = executor, by_id, dataset, modules
        self.library, self.numbered = library, numbered or {}

    def __call__(self, candidate: Candidate) -> Problem | None:
        functions = [*self.library, candidate]
        failures: list[tuple[str, str, str]] = []  # (question id, for the log, for the LLM)
        for use in candidate.uses:
            question = self.by_id[use.source.question_id]
            namespace = program_namespace(self.dataset.image(question), self.modules, functions, question.regions)
            run = run_program(self.executor, use.code, namespace)
            if run.error is not None:
                detail = run.error.splitlines()[-1]
                failures.append((question.question_id, detail, detail))
            elif not scored_right(run, use.source.gold, question):
                answered = f"answered {run.result.value!r}"
                failures.append((question.question_id, f"{answered}, was {use.source.answer!r}",
                                 f"{answered}, which is wrong"))
        evidence = candidate.evidence
        evidence.reproduced, evidence.programs = len(candidate.uses) - len(failures), len(candidate.uses)
        evidence.changed = [qid for qid, _, _ in failures] or None
        if not failures:
            return None
        qid, log, llm = failures[0]
        head = f"{len(failures)} of {len(candidate.uses)} rewritten programs changed"
        shown = (f"question {self.numbered[qid]} ({self.by_id[qid].question})" if qid in self.numbered
                 else f"question {qid}")
        return AnswersChanged(f"{head}: {shown}: {llm}", f"{head}: question {qid}: {log}")


class TruthCheck:
    """The helper passes the ground-truth checks its name invites (`vadar.library.truth_checks`)."""

    def __init__(self, truth: TruthChecks | None, dataset: Dataset, modules: ModuleSet, library: Sequence[Any],
                 questions: Sequence[Question], results: dict[tuple[str, str], TruthResult] | None = None) -> None:
        self.truth, self.dataset, self.modules = truth, dataset, modules
        self.library, self.questions = library, questions
        self.results = {} if results is None else results  # by helper and body: a body is checked once

    def confirms(self, candidate: Candidate) -> bool:
        """Whether ground truth `confirmed` the helper (`admission.OutcomeRule` then admits it)."""
        checked = self._checked(candidate)
        return checked is not None and confirmed(checked.to_dict())

    def _checked(self, candidate: Candidate) -> TruthResult | None:
        if self.truth is None:
            return None
        key = (candidate.name, candidate.code)
        if key not in self.results:
            self.results[key] = self.truth.check(candidate, [*self.library, candidate], self.dataset,  # type: ignore[arg-type]
                                                 self.modules, list(self.questions))
        return self.results[key]

    def __call__(self, candidate: Candidate) -> Problem | None:
        checked = self._checked(candidate)
        if checked is None:
            return None
        candidate.evidence.truth_check = checked.to_dict()
        if checked.passed is not False:
            return None
        cases = tuple(Case(f"ground-truth check ({checked.claim})", "the true objects", failure)
                      for failure in checked.failures[:3])
        return TruthFailed(f"its ground-truth check failed: {checked.failures[0]}", cases=cases)
