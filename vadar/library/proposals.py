"""The proposal route: the Signature agent proposes helpers for a batch, the API agent implements
them, and the candidates go to the one gate (`vadar.library.admission`, `vadar.library.gate`).

What the route decides before the gate: what to ask for (the proposals an earlier batch's cap left
waiting first, `vadar.library.proposal_queue`; then, only while a step of the batch's questions is
uncovered, `vadar.library.coverage`, the Signature agent's), which proposals to keep (one helper
per checkable claim: a second `_objects_left_of` under another name only splits its uses; no
trivial rename of an existing name; refused before the cap counts them, so no duplicate costs an
implementation request or a new helper's place), what not to try again (`vadar.library.memory`:
the rejections remembered), and which helper rejected before only for lack of evidence comes back
as it was, to be judged on the new batch's questions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from api_store import ApiStore, BatchRecord, DuplicateFunctionError, FunctionStatus
from omni3d_bench.types import Question
from vadar.agents.api import ApiAgent, ImplementationReport, TestContext
from vadar.agents.helper_search import SearchRecord, SearchSettings
from vadar.agents.signature import SignatureAgent, name_words, rejection_reason
from vadar.library.admission import Admission, AdmissionSetup
from vadar.library.aims import proposal_aims
from vadar.library.batch import BuildBatch
from vadar.library.checks import BehaviourChecks
from vadar.library.claims import claim_label
from vadar.library.coverage import uncovered_steps
from vadar.library.gate import admit_as_given
from vadar.library.implementation_log import StoreLog
from vadar.library.memory import Remembered, remembered_helpers
from vadar.library.outcome_check import OutcomeVerifier
from vadar.library.scene_check import SceneChecker, build_scenes
from vadar.library.proposal_queue import QueuedStub, RecordedProposals, waiting_before
from vadar.library.retirement import retire_harmful
from vadar.library.shape_helpers import proposed_by_shape_route, untried
from vadar.library.truth_checks import TruthChecks, TruthVerifier
from vadar.programs.api_text import render_api
from vadar.programs.helper_rules import fit_library
from vadar.programs.sampling import PROGRAM, PROGRAM_SAMPLE
from vadar.programs.stubs import Stub, normalized_name


@dataclass
class ProposalReport:
    """What the route did with one batch's proposals, name by name."""

    proposed: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # screened out, as `name: why`
    implemented: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    reused: list[str] = field(default_factory=list)  # came back as implemented before (new evidence, same code)
    admitted: list[str] = field(default_factory=list)
    not_admitted: dict[str, str] = field(default_factory=dict)
    repaired: list[str] = field(default_factory=list)
    attempts: int = 0  # implementation replies, every sample of a search included
    searches: dict[str, SearchRecord] = field(default_factory=dict)
    from_queue: list[str] = field(default_factory=list)  # cut by an earlier batch's cap, implemented here
    queued: list[str] = field(default_factory=list)  # cut by the cap: waiting for the next batch
    signature_requests: int = 0  # Signature agent replies this batch asked for
    signature_skipped: bool = False  # every step covered and nothing waiting: no request at all


def proposal_route(batch: BuildBatch, record: BatchRecord) -> ProposalReport:
    """Top-down: proposals kept by the screen, implemented as candidates, judged by the gate."""
    report = ProposalReport()
    memory = remembered_helpers(batch.store)
    record = _proposals(batch, record, memory, report)
    recorded = RecordedProposals.of(record)
    report.rejected = list(recorded.rejected)
    report.queued = [q.stub.name for q in recorded.queued]
    _screen(batch, recorded, memory, report)
    contexts = batch.test_contexts(batch.questions)
    agent = api_agent(batch, batch.questions)
    pending = [f.name for f in batch.store.functions(FunctionStatus.PROPOSED)  # leftovers of a crash too,
               if not proposed_by_shape_route(f.name, f.docstring)]  # but the shape route resumes its own
    outcome: ImplementationReport = agent.implement(pending, contexts)
    report.implemented, report.failed = outcome.implemented, outcome.failed
    report.attempts, report.searches = sum(outcome.attempts.values()), outcome.searches
    _admit(batch, agent, contexts, report)
    return report


def _proposals(batch: BuildBatch, record: BatchRecord, memory: dict[str, Remembered],
               report: ProposalReport) -> BatchRecord:
    """The batch's proposals: first what earlier batches' cap left waiting, then, for the places
    left and only while a step of the batch's questions is uncovered, the Signature agent's; or, on
    a resumed batch, those recorded before the interruption."""
    if record.proposals is not None:  # resuming: implement what was proposed before the interruption
        return record
    store = batch.store
    cap = batch.limits.max_new_functions
    existing = [f.name for f in store.functions()]
    tried = {m.name: m.reason for m in memory.values() if m.blocked}
    screen = ClaimScreen(store, comebacks={m.name: m.signature for m in memory.values() if not m.blocked})
    taken = {normalized_name(n) for n in existing}
    similar = {name_words(n): n for n in existing}
    waiting, rejected = [], []
    for queued in waiting_before(store, batch.run_id, batch.index):
        reason = rejection_reason(queued.stub, taken, similar, tried) or screen(queued.stub)
        if reason:  # the library got it, or its claim, since it was cut
            rejected.append(f"{queued.stub.name}: {reason}")
            continue
        waiting.append(queued)
        taken.add(normalized_name(queued.stub.name))
        similar.setdefault(name_words(queued.stub.name), queued.stub.name)
    accepted, left = [q.stub for q in waiting[:cap]], waiting[cap:]
    report.from_queue = [stub.name for stub in accepted]
    library = store.library()  # nothing is written until the proposals are recorded
    # what the library has, and what waiting proposals will bring, is not asked for again
    settings = batch.settings  # counts and comparisons a question-shape helper may yet carry wait for it
    awaited = untried(store) if settings.shape_route else []
    missing = uncovered_steps([q.question for q in batch.questions], [*library, *(q.stub for q in waiting)], awaited)
    if len(accepted) < cap and missing:
        batch.on_event(f"batch {batch.index + 1}: proposing signatures for {len(batch.questions)} questions")
        signature_agent = SignatureAgent(batch.llm, max_attempts=batch.limits.signature_attempts,
                                         max_functions=cap - len(accepted))
        aims = (proposal_aims(batch.questions, batch.built_from, store.verified_programs(), library, awaited)
                if batch.settings.aim else None)
        api_text = render_api(fit_library(library), **batch.api_options)  # the request's bound, as for every program
        proposals = signature_agent.propose([q.question for q in batch.questions], api_text,
                                            [*existing, *(q.stub.name for q in waiting)], tried, aims, screen)
        accepted += proposals.accepted
        rejected += [f"{stub.name}: {reason}" for stub, reason in proposals.rejected]
        left += [QueuedStub(stub, batch.index) for stub in proposals.queued]
        report.signature_requests = proposals.attempts
    elif not missing and not waiting:
        report.signature_skipped = True  # every step covered, nothing waiting: nothing to ask for
        batch.on_event(f"batch {batch.index + 1}: every step of its questions is covered; no proposals asked")
    return store.record_proposals(record.id, [dataclasses.asdict(stub) for stub in accepted], rejected,
                                  [q.to_dict() for q in left])


class ClaimScreen:
    """Refuses a stub whose checkable claim the library (or a stub kept before it) makes already:
    a second `_objects_left_of` under another name only splits its uses.

    Also refuses a helper rejected for lack of uses proposed again with another signature
    (`comebacks`: name -> the signature it was judged with). It may come back as it was, its stored
    implementation judged on new questions; under a new signature it would be searched from scratch
    for the name that programs did not call (`_count_more_than(image, count1, count2)` came back as
    `(image, bbox1, bbox2)`, "the number of objects in bbox1", and cost a batch 11 samples).
    """

    def __init__(self, store: ApiStore, comebacks: Mapping[str, str] | None = None) -> None:
        self.claimed = {label: f.name for f in store.library(with_candidates=True)
                        if (label := claim_label(f.name, f.signature)) is not None}
        self.comebacks = dict(comebacks or {})

    def __call__(self, stub: Stub) -> str | None:
        before = self.comebacks.get(stub.name)
        if before is not None and before != stub.signature:
            return (f"`{stub.name}` was not admitted before for lack of uses with the signature {before}; "
                    "it may come back only as it was")
        label = claim_label(stub.name, stub.signature)
        if label is None:
            return None
        if label in self.claimed:
            return f"claims {label}, as `{self.claimed[label]}` does already"
        self.claimed[label] = stub.name
        return None


def _screen(batch: BuildBatch, recorded: RecordedProposals, memory: dict[str, Remembered],
            report: ProposalReport) -> None:
    """Store the proposals the screen kept; a helper rejected only for lack of evidence comes back."""
    store = batch.store
    for stub in recorded.accepted:
        if stub.name in store and any(v.batch_id == batch.batch_id for v in store.history(stub.name)):
            report.proposed.append(stub.name)  # proposed by this batch before an interruption
            continue
        try:
            store.propose(stub.name, stub.signature, stub.docstring, **batch.provenance)
            report.proposed.append(stub.name)
        except DuplicateFunctionError as exc:
            report.rejected.append(f"{stub.name}: {exc}")
            continue
        comeback = memory.get(stub.name)
        if comeback is not None and not comeback.blocked and comeback.signature == stub.signature:
            # rejected before only for lack of evidence: these questions judge the same implementation
            store.implement(stub.name, comeback.code or "", dependencies=list(comeback.dependencies),
                            **batch.provenance)
            report.reused.append(stub.name)


def api_agent(batch: BuildBatch, judged_on: Sequence[Question], samples: int | None = None) -> ApiAgent:
    """The batch's API agent: ground truth for a name that makes a checkable claim, else (labelled)
    the gold answers of the build questions `judged_on` (the batch's own, or a shape's); `samples`
    per search round where not `library.search_samples`."""
    settings = batch.settings
    search = SearchSettings(samples or settings.search_samples, settings.search_rounds, settings.search_temperature,
                            settings.search_seed)
    # ground-truth cases come from the scenes of the questions actually built, never a scored one
    verifier = TruthVerifier(TruthChecks(batch.executor), batch.store, batch.dataset, batch.modules,
                             list(batch.scenes))
    scenes = SceneChecker(batch.executor, batch.dataset, batch.modules,
                          build_scenes([*batch.earlier, *batch.scenes]), settings.scene_checks)
    outcome = (OutcomeVerifier(batch.writer(PROGRAM), batch.store, batch.executor, batch.dataset, batch.modules,
                               judged_on, min_support=settings.outcome_min_support, on_event=batch.on_event,
                               scenes=scenes, truth=verifier, view_modules=batch.view_modules)
               if settings.admission == "labelled" else None)
    return ApiAgent(batch.llm, batch.store, batch.executor, log=StoreLog(batch.store, **batch.provenance),
                    max_attempts=batch.limits.implementation_attempts, on_event=batch.on_event, search=search,
                    verifier=verifier, outcome=outcome, api_options=batch.api_options,
                    prefill=batch.limits.implementation_prefill)


def batch_admission(batch: BuildBatch, agent: ApiAgent) -> Admission:
    """The gate as every route of the batch meets it, with one repair by `agent` where allowed."""
    settings = batch.settings
    setup = AdmissionSetup(mode=settings.admission, sampler=batch.writer(PROGRAM_SAMPLE),
                           repair=agent.repair if settings.repair else None,
                           checks=BehaviourChecks(batch.llm, batch.executor), truth=TruthChecks(batch.executor),
                           truth_scenes=batch.scenes,  # the scenes the search's ground-truth cases came from
                           min_uses=settings.admit_min_uses, batch_id=batch.batch_id, on_event=batch.on_event,
                           view_modules=batch.view_modules)
    return Admission(batch.store, batch.writer(PROGRAM), batch.executor, setup)


def _admit(batch: BuildBatch, agent: ApiAgent, contexts: list[TestContext], report: ProposalReport) -> None:
    """The gate judges the batch's candidates (and any a crash left unjudged); then the build's
    figures retire what keeps losing."""
    settings, store = batch.settings, batch.store
    candidates = store.candidates()
    if settings.admission == "off":  # no check judges them: the library takes them as they are
        admit_as_given(store, [c.name for c in candidates], mode="off")
        return
    if not candidates:
        return
    decided = batch_admission(batch, agent).decide(candidates, batch.questions, batch.dataset, batch.modules, contexts)
    report.admitted, report.not_admitted, report.repaired = decided.admitted, decided.rejected, decided.repaired
    report.not_admitted.update(retire_harmful(store, min_uses=settings.retire_min_uses, below=settings.retire_below))
