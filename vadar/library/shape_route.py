"""The question-shape route: helpers one level up, proposed from the catalogue once the build
questions show enough of a shape, searched and admitted by outcome on every build question of it.

After a batch's step route (`vadar.library.proposals`), each catalogue helper
(`vadar.library.shape_helpers`) is due when the labelled build questions so far (this run's and those
of the library's earlier build runs on the same data) whose shape one call of it answers, and no
admitted helper earlier in the catalogue does (`_its_own`), weigh at least
`library.outcome_min_support` (a yes/no question counting half, as at the gate) and the store has
never held its name (or it failed with another proposal than the route would make now, such as
fewer step helpers to build on: it is tried again); at most `library.shape_helpers_per_batch` are
tried per batch, those never tried before any retry, each the most supported first. A helper that
is only a step of a shape (`_find_related` in a chain of relations) is never due: in six CLEVR
builds none was admitted that way, and each try cost a proposal, a search and programs. One at a
time:

1. it is proposed with the catalogue's signature and docstring, the docstring naming the admitted
   step helpers it composes (`shape_proposal.built_on`: "Build it on the library's helpers:
   `_objects_left_of` (relation left), ...");
2. the API agent implements it, searched by outcome (`vadar.library.outcome_check`) on the latest
   build questions of its shape, from every batch built so far, that weigh at most
   `library.shape_search_support` (`searched_on`): the programs the Program agent writes
   for them, with the helper shown first, must call it and be right;
3. below the minimum support (too few of those programs called it) it is refused, not kept as a
   greedy guess: a shape helper is there to carry the composition, and no program showed it does;
4. otherwise the gate (`vadar.library.admission`) judges it on the same questions, and its right
   programs become the worked examples that call it.

One helper is admitted before the next is chosen, so the next one's programs see it (and it is not
chosen for questions the admitted one answers whole), and the gate's programs are the search's own
requests (the response cache answers them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from api_store import DuplicateFunctionError, FunctionStatus
from omni3d_bench.types import Question
from vadar.library.batch import BuildBatch
from vadar.library.proposals import api_agent, batch_admission
from vadar.library.retirement import retire_harmful
from vadar.library.shape_helpers import ShapeHelper, answered_by, proposed_by_shape_route, supported
from vadar.library.shape_proposal import proposed_docstring
from vadar.library.sources import success_weight, support as evidence_weight


@dataclass
class ShapeReport:
    """What the route did with one batch's question-shape helpers, name by name."""

    proposed: list[str] = field(default_factory=list)
    implemented: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    admitted: list[str] = field(default_factory=list)
    not_admitted: dict[str, str] = field(default_factory=dict)
    support: dict[str, int] = field(default_factory=dict)  # build questions whose programs called it
    questions: dict[str, int] = field(default_factory=dict)  # build questions of its shapes


def due_helpers(batch: BuildBatch) -> list[tuple[ShapeHelper, list[Question]]]:
    """The catalogue helpers this batch tries, with the labelled build questions of their shapes."""
    settings = batch.settings
    if not settings.shape_route:
        return []
    # this run's build questions so far and those of earlier build runs of the library
    labelled = [q for q in (*batch.earlier, *batch.built_from) if q.answer is not None]
    admitted = {f.name for f in batch.store.library()}
    # never below the minimum support, which a search on fewer questions could not reach
    most = settings.shape_search_support and max(settings.shape_search_support, settings.outcome_min_support)
    due = []
    for helper, positions in supported([q.question for q in labelled]):
        own = _its_own([labelled[i] for i in positions], helper, admitted)
        # a helper tried before is not proposed again, unless its proposal would now differ; its own
        # questions weighed as the gate weighs evidence: four yes/no questions (2) can never admit it
        if _untried(batch, helper) and evidence_weight([q.answer for q in own]) >= settings.outcome_min_support:
            due.append((helper, searched_on(own, most)))
    # a retry never outranks a helper never tried: in a CLEVR build `_attribute_of_related` failed and
    # was retried in each of three batches, so `_compare_counts` and `_count_either` never got a slot
    due.sort(key=lambda pair: pair[0].name in batch.store)
    return due[:settings.shape_helpers_per_batch]


def _its_own(questions: Sequence[Question], helper: ShapeHelper, admitted: set[str]) -> list[Question]:
    """The questions whose programs would be shown `helper` as their one call (`answered_by`): not
    those an admitted helper earlier in the catalogue already answers whole, whose programs are shown
    that one's call and checked towards it. Three 100-question CLEVR builds searched `_count_related`
    on chained counts `_objects_along` answered, and no program called it; one searched
    `_attribute_of_related` on such attribute questions, and programs for 1 of 6 called it (the two
    together 4.3 minutes of that build)."""
    return [q for q in questions if answered_by(q.question, admitted | {helper.name}) == helper.name]


def searched_on(questions: Sequence[Question], most: float) -> list[Question]:
    """The latest of `questions` (in their order) that weigh at most `most` as the gate weighs
    evidence (`sources.support`: a yes/no question counts half; 0: all of them). The latest first:
    the batch's own questions the gate records programs for need no build program after it, while
    earlier batches' have theirs. Each question costs a program with the helper and one without it,
    10 to 25 s each; a 100-question CLEVR build searched seven helpers, eight times, on 8 to 12 each."""
    if most <= 0:
        return list(questions)
    kept: list[Question] = []
    weight = 0.0
    for question in reversed(questions):
        weight += success_weight(question.answer)
        if kept and weight > most:
            break
        kept.append(question)
    return kept[::-1]


def _untried(batch: BuildBatch, helper: ShapeHelper) -> bool:
    """Never in the store; proposed by this route before an interruption and not implemented yet;
    or failed when the route proposed it otherwise: with fewer step helpers to build on (a batch
    that admits `_objects_behind` gives `_find_related` another try) or an older catalogue text
    (`_attribute_of_same` failed all 16 samples offered only the `_same_` helpers, without the hint
    of how to read an attribute). Failed with the proposal it would get now, it is not tried again."""
    if helper.name not in batch.store:
        return True
    current = batch.store.current(helper.name)
    if not proposed_by_shape_route(current.name, current.docstring):
        return False
    if current.status is FunctionStatus.FAILED:
        return proposed_docstring(helper, batch.store.library()) != current.docstring
    return current.status is FunctionStatus.PROPOSED


def shape_route(batch: BuildBatch) -> ShapeReport:
    """Propose, implement, search and judge the batch's due question-shape helpers, one at a time,
    each chosen after the one before was judged: one admitted may answer the next one's questions."""
    report, tried = ShapeReport(), set()
    for _ in range(batch.settings.shape_helpers_per_batch):
        due = [(helper, questions) for helper, questions in due_helpers(batch) if helper.name not in tried]
        if not due:
            break
        helper, questions = due[0]
        tried.add(helper.name)
        batch.on_event(f"batch {batch.index + 1}: question-shape helper {helper.name} "
                       f"for {len(questions)} build questions")
        try_shape_helper(batch, helper, questions, report)
    return report


def try_shape_helper(batch: BuildBatch, helper: ShapeHelper, questions: Sequence[Question],
                     report: ShapeReport) -> None:
    """Propose one question-shape helper as the route would now, search it by outcome on `questions`
    and judge it; what happened goes into `report` (`benchmarks/shape_search_paired.py` repeats this
    alone, with other sample seeds)."""
    report.questions[helper.name] = len(questions)
    try:
        if helper.name not in batch.store or batch.store.current(helper.name).status is not FunctionStatus.PROPOSED:
            # a new helper, or one failed before with fewer step helpers to build on (else proposed
            # before an interruption: implemented now)
            docstring = proposed_docstring(helper, batch.store.library())
            batch.store.propose(helper.name, helper.signature, docstring, **batch.provenance)
    except DuplicateFunctionError as exc:
        report.failed[helper.name] = str(exc)
        return
    report.proposed.append(helper.name)
    _one(batch, helper, questions, report)


def _one(batch: BuildBatch, helper: ShapeHelper, questions: Sequence[Question], report: ShapeReport) -> None:
    settings, store, name = batch.settings, batch.store, helper.name
    contexts = batch.test_contexts(questions)
    # judged by the gold answers of its shape's build questions
    agent = api_agent(batch, questions, samples=settings.shape_search_samples)
    implemented = agent.implement([name], contexts)
    if name in implemented.failed:
        report.failed[name] = implemented.failed[name]
        return
    report.implemented.append(name)
    evidence = agent.outcome.evidence(name) if agent.outcome is not None else None
    support = evidence.support if evidence is not None else 0
    report.support[name] = support
    if evidence is None or not evidence.searched:
        asked = evidence.asked if evidence is not None else 0
        written = "" if asked in (0, len(questions)) else f"; programs written for {asked}, the rest could not reach it"
        weighing = evidence.weighing if evidence is not None else ""
        reason = (f"too few supporting build questions: programs for {support} of the {len(questions)} "
                  f"questions of its shape called it{weighing} (at least {settings.outcome_min_support} "
                  f"needed{written})")
        store.record_decision(name, "rejected", mode=settings.admission, evidence={"reason": reason})
        store.mark_failed(name, f"not admitted: {reason}")
        report.not_admitted[name] = reason
        batch.on_event(f"rejected {name}: {reason}")
        return
    decided = batch_admission(batch, agent).decide([store.current(name)], list(questions), batch.dataset,
                                                   batch.modules, contexts)
    report.admitted += decided.admitted
    report.not_admitted.update(decided.rejected)
    report.not_admitted.update(retire_harmful(store, min_uses=settings.retire_min_uses, below=settings.retire_below))
