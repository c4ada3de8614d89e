"""The jobs users run: build the API over batches of questions, then answer questions with it.

An evaluation's one record is its run directory: `run.json` (the settings it was started with),
`results.jsonl` (one durable line per answered question: resume, summaries, `vadar compare` and
reports all read it) and `summary.json`/`summary.md` derived from those two. The library store
keeps what building produced: functions, versions, attempts, and the runs and batches that made
them.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api_store import ApiStore, DuplicateFunctionError, FunctionStatus, RunRecord, RunStatus, StoreError
from omni3d_bench.types import Question
from vadar.agents.api import ApiAgent, TestContext
from vadar.agents.helper_search import SearchRecord, SearchSettings
from vadar.programs.sampling import PROGRAM_SAMPLE
from vadar.agents.signature import SignatureAgent
from vadar.agents.techniques.vote import VoteRecord
from vadar.library.admission import Admission
from vadar.library.retirement import retire_harmful
from vadar.library.checks import BehaviourChecks
from vadar.library.gate import admit_as_given
from vadar.library.aims import proposal_aims
from vadar.library.claims import claim_label
from vadar.library.memory import remembered_helpers
from vadar.library.tracking import track_evaluation
from vadar.library.truth_checks import TruthChecks, TruthVerifier
from vadar.programs.calls import helpers_called
from vadar.programs.stubs import Stub
from vadar.programs.api_text import render_api
from vadar.runs.storage import write_text_atomically, writing
from vadar.runs.evaluation import EvalSummary, run_questions, summarize_results, write_summary
from vadar.runs.executors import QuestionExecutor
from vadar.runs.executors.job import QuestionJob
from vadar.runs.methods import PROGRAM_METHODS, Answerer, make_answerer, program_agent_for, read_library
from vadar.programs.namespace import program_namespace
from vadar.runs.distillation import distill_batch
from vadar.runs.validation import ValidationReport, held_back, validate_library
from vadar.runs.prepare import PreparedData
from vadar.runs.results import ResultsFile
from vadar.runs.manifest import claim_run_dir, lock_run_dir
from vadar.runs.session import Session

if TYPE_CHECKING:
    from vadar.runs.executors.ray_cluster import RayCluster


# ---------------------------------------------------------------- answering questions


def evaluate(
    session: Session,
    data: PreparedData,
    out_dir: Path,
    *,
    method: str = "vadar",
    show_progress: bool = True,
    scope: str = "held-out",
    jobs: int | None = None,
    cluster: RayCluster | None = None,
) -> EvalSummary:
    """Answer the selected questions with `method` (resuming from `out_dir`), write results and summary.

    `jobs` questions are answered at once on this machine (default: `eval.jobs`), or, with a
    `cluster`, each question is a task on that Ray cluster; `show_progress=False` keeps this
    evaluation off the session's progress display.
    """
    dataset, split, questions = data.dataset, data.split, data.questions
    built_from = session.store.build_question_ids(data=str(dataset.root), split=split)
    questions = select_questions(questions, built_from, scope)
    reasoning = dataclasses.asdict(session.config.reasoning) if method in PROGRAM_METHODS else {}
    claim_run_dir(out_dir, {"data": str(dataset.root), "split": split, "method": method,
                            "modules": data.backends, "model": session.model_name, "reasoning": reasoning})
    limits = dataclasses.asdict(session.config.agents)
    jobs = session.config.eval.jobs if jobs is None else jobs
    answer: Answerer | None = None
    executor: QuestionExecutor | None = None
    if cluster is None:
        answer, library = make_answerer(method, session, data)
        if jobs > 1 and method != "direct":  # start the workers while the first requests are out
            threading.Thread(target=session.sandboxes.warm, args=(min(jobs, len(questions)),),
                             name="vadar-warm-sandboxes", daemon=True).start()
    else:  # the library is read once here and shipped; workers never open the store
        snapshot = read_library(session.store, method)
        library = snapshot.functions
        job = QuestionJob(method, session.config, snapshot, dataset, dict(data.backends),
                          base_url=getattr(session.llm, "base_url", None), llm_factory=cluster.llm_factory)
        executor = cluster.executor(job, usage=session.usage)
    results = run_questions(questions, answer, ResultsFile(out_dir / "results.jsonl"), method=method,
                            jobs=jobs, progress=session.progress if show_progress else None, executor=executor,
                            keep_going=session.config.eval.keep_going)
    used = _library_functions_used(results, [f.name for f in library])
    header = {
        "name": out_dir.name, "data": str(dataset.root), "split": split, "method": method,
        "model": session.model_name, "library_functions": len(library),
        "library_functions_used": len(used), "agent_limits": limits,
        "questions_scope": scope, "build_questions": len(built_from), "library_settings": dataclasses.asdict(session.config.library),
        "techniques": session.config.reasoning.label() if reasoning else "none", "reasoning": reasoning,
        "llm_usage_this_session": session.usage.totals().as_dict(),
    }
    votes = [vote for r in results if (vote := r.techniques.get(VoteRecord)) is not None]
    agreements = [vote.agreement for vote in votes]
    if agreements:  # with several programs per question: how often they agreed with the chosen answer
        header["mean_agreement"] = round(sum(agreements) / len(agreements), 4)
    summary = summarize_results(results, header)
    write_summary(summary, out_dir)
    if method == "vadar" and library:  # the library keeps its figures from every evaluation
        track_evaluation(session.store, results, run=str(out_dir))
    return summary


SCOPES = ("held-out", "build", "all")


def select_questions(questions: Sequence[Question], built_from: set[str], scope: str) -> list[Question]:
    """`held-out`: never a question the library was built from (the default, and the only honest
    score); `build`: only those (admission should keep vadar at least as good there); `all`."""
    if scope not in SCOPES:
        raise ValueError(f"unknown question scope {scope!r}; choose one of: {', '.join(SCOPES)}")
    if scope == "held-out":
        return [q for q in questions if q.question_id not in built_from]
    if scope == "build":
        return [q for q in questions if q.question_id in built_from]
    return list(questions)


def _library_functions_used(results: Sequence[Any], names: Sequence[str]) -> set[str]:
    return {n for r in results for n in helpers_called(r.program, names)}


# ---------------------------------------------------------------- building the API


@dataclass
class BatchReport:
    index: int
    question_ids: list[str]
    proposed: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    implemented: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    admitted: list[str] = field(default_factory=list)
    not_admitted: dict[str, str] = field(default_factory=dict)
    distilled: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)  # came back as implemented before (new evidence, same code)
    repaired: list[str] = field(default_factory=list)
    attempts: int = 0  # implementation replies, every sample of a search included
    searches: dict[str, SearchRecord] = field(default_factory=dict)
    skipped: bool = False


def build_api(
    session: Session,
    data: PreparedData,
    out_dir: Path,
    *,
    batch_size: int = 10,
    batches: int | None = None,
    on_batch: Callable[[BatchReport], None] | None = None,
    on_event: Callable[[str], None] | None = None,
    on_validation: Callable[[ValidationReport], None] | None = None,
) -> list[BatchReport]:
    """Signature agent then API agent, batch after batch; each batch builds on the last.

    Resumes exactly: finished batches are skipped, and a build that was interrupted, failed or
    killed is reopened (the same store run and batches), so its batch implements the proposals
    recorded before the interruption instead of asking the Signature agent again. The store run
    ends `finished`, `interrupted` (Ctrl-C) or `failed` (any other exception).
    """
    dataset, split, questions = data.dataset, data.split, data.questions
    store, progress = session.store, session.progress
    lock_run_dir(out_dir)
    state = _BuildState(out_dir / "build_state.json")
    kept_back = held_back(len(questions), session.config.library)
    questions, validation = questions[:len(questions) - kept_back], questions[len(questions) - kept_back:]
    chunks = [questions[i:i + batch_size] for i in range(0, len(questions), batch_size)]
    if batches is not None:
        chunks = chunks[:batches]
    config = {"data": str(dataset.root), "split": split, "batch_size": batch_size,
              "agents": dataclasses.asdict(session.config.agents),
              **({"validation": [q.question_id for q in validation]} if validation else {})}
    run = _resumable_run(store, state.run_id, config)
    if run is None:
        run = store.start_run("build-api", model=session.model_name, config=config)
        state.set_run(run.id)
    else:
        progress.announce(f"resuming build run {run.id} ({run.status.value})")
        run = store.reopen_run(run.id)

    def event(message: str) -> None:
        progress.activity(message)
        if on_event is not None:
            on_event(message)

    reports = []
    try:
        for index, chunk in enumerate(chunks):
            ids = [q.question_id for q in chunk]
            progress.batch(index, len(chunks))
            if state.done(ids):
                report = BatchReport(index, ids, skipped=True)
            else:
                built_from = [q for done in chunks[:index + 1] for q in done]
                report = _build_batch(session, data, chunk, index, run.id, event, built_from, questions)
                state.mark_done(ids)
            reports.append(report)
            if on_batch is not None:
                on_batch(report)
        if validation:
            _validate(session, data, validation, run.id, len(chunks), state, out_dir, event, on_validation)
    except KeyboardInterrupt:
        store.finish_run(run.id, RunStatus.INTERRUPTED)
        raise
    except BaseException:
        store.finish_run(run.id, RunStatus.FAILED)
        raise
    store.finish_run(run.id, RunStatus.FINISHED)
    return reports


def _validate(session: Session, data: PreparedData, questions: Sequence[Question], run_id: int, index: int,
              state: _BuildState, out_dir: Path, on_event: Callable[[str], None],
              on_validation: Callable[[ValidationReport], None] | None) -> None:
    """The validation gate on the held-back questions, recorded as the build's last batch (so never scored)."""
    ids = [q.question_id for q in questions]
    session.store.start_batch(run_id, ids, index=index)
    if state.done(ids):
        return
    session.progress.batch(index, index + 1)
    report = validate_library(session, data, questions, on_event)
    write_text_atomically(out_dir / "validation.json", json.dumps(report.to_dict(), indent=2, default=str))
    state.mark_done(ids)
    if on_validation is not None:
        on_validation(report)


def _resumable_run(store: ApiStore, run_id: int | None, config: dict[str, Any]) -> RunRecord | None:
    """The build run this run directory left unfinished, if it was made with the same settings."""
    if run_id is None:
        return None
    try:
        run = store.run(run_id)
    except StoreError:
        return None  # another library database than the one this directory was built into
    same = json.loads(json.dumps(config, default=str, sort_keys=True)) == run.config
    return run if run.kind == "build-api" and run.status != RunStatus.FINISHED and same else None


def _build_batch(session: Session, data: PreparedData, chunk: Sequence[Question], index: int, run_id: int,
                 on_event: Callable[[str], None] | None, built_from: Sequence[Question],
                 scenes: Sequence[Question]) -> BatchReport:
    """One batch: proposals (checked on the scenes of `scenes`, the build's questions), then distillation."""
    store = session.store
    report = BatchReport(index, [q.question_id for q in chunk])
    batch = store.start_batch(run_id, report.question_ids, index=index)
    if session.config.library.propose:
        _propose_and_implement(session, data, chunk, index, batch, report, on_event, scenes, built_from)
    distilled = distill_batch(session, data, chunk, batch.id, built_from, on_event)
    if distilled is not None:
        report.distilled = distilled.admitted
        report.not_admitted.update(distilled.rejected)
    return report


def _propose_and_implement(session: Session, data: PreparedData, chunk: Sequence[Question], index: int,
                           batch: Any, report: BatchReport, on_event: Callable[[str], None] | None,
                           scenes: Sequence[Question], built_from: Sequence[Question]) -> None:
    """Top-down: the Signature agent proposes, the API agent implements, admission decides."""
    store = session.store
    provenance = {"run_id": batch.run_id, "batch_id": batch.id, "model": session.model_name}
    api_text = render_api(store.library())
    existing = [f.name for f in store.functions()]
    memory = remembered_helpers(store)
    limits = session.config.agents
    if batch.proposals is None:  # else: resuming, implement what was proposed before the interruption
        if on_event:
            on_event(f"batch {index + 1}: proposing signatures for {len(chunk)} questions")
        signature_agent = SignatureAgent(session.llm, max_attempts=limits.signature_attempts,
                                         max_functions=limits.max_new_functions)
        tried = {m.name: m.reason for m in memory.values() if m.blocked}
        aims = proposal_aims(chunk, built_from, store.verified_programs()) if session.config.library.aim else None
        proposals = signature_agent.propose([q.question for q in chunk], api_text, existing, tried, aims)
        batch = store.record_proposals(batch.id, [dataclasses.asdict(stub) for stub in proposals.accepted],
                                       [f"{stub.name}: {reason}" for stub, reason in proposals.rejected])
    assert batch.proposals is not None
    report.rejected = list(batch.proposals["rejected"])
    # one helper per checkable claim: a second `_objects_left_of` under another name only splits its uses
    claimed = {label: f.name for f in store.library(with_candidates=True)
               if (label := claim_label(f.name, f.signature)) is not None}
    for stub in (Stub(**fields) for fields in batch.proposals["accepted"]):
        if stub.name in store and any(v.batch_id == batch.id for v in store.history(stub.name)):
            report.proposed.append(stub.name)  # proposed by this batch before an interruption
            continue
        label = claim_label(stub.name, stub.signature)
        if label is not None and label in claimed:
            report.rejected.append(f"{stub.name}: claims {label}, as `{claimed[label]}` does already")
            continue
        if label is not None:
            claimed[label] = stub.name
        try:
            store.propose(stub.name, stub.signature, stub.docstring, **provenance)
            report.proposed.append(stub.name)
        except DuplicateFunctionError as exc:
            report.rejected.append(f"{stub.name}: {exc}")
            continue
        comeback = memory.get(stub.name)
        if comeback is not None and not comeback.blocked and comeback.signature == stub.signature:
            # rejected before only for lack of evidence: these questions judge the same implementation
            store.implement(stub.name, comeback.code or "", dependencies=list(comeback.dependencies), **provenance)
            report.reused.append(stub.name)
    pending = [f.name for f in store.functions(FunctionStatus.PROPOSED)]  # leftovers of a crash too
    words = getattr(data.dataset, "example_words", {})
    contexts = [TestContext(q.question, program_namespace(data.dataset.image(q), data.modules), words)
                for q in chunk]
    settings = session.config.library
    search = SearchSettings(settings.search_samples, settings.search_rounds, settings.search_temperature)
    # ground-truth cases come from the scenes of every build question (never a held-back one)
    verifier = TruthVerifier(TruthChecks(session.executor), store, data.dataset, data.modules, scenes)
    agent = ApiAgent(session.llm, store, session.executor, max_attempts=limits.implementation_attempts,
                     on_event=on_event, search=search, verifier=verifier, **provenance)
    outcome = agent.implement(pending, contexts)
    report.implemented, report.failed = outcome.implemented, outcome.failed
    report.attempts, report.searches = sum(outcome.attempts.values()), outcome.searches
    _admit(session, data, chunk, contexts, agent, batch.id, report, on_event)


def _admit(session: Session, data: PreparedData, chunk: Sequence[Question], contexts: Sequence[TestContext],
           agent: ApiAgent, batch_id: int, report: BatchReport, on_event: Callable[[str], None] | None) -> None:
    """Outcome-verified admission of the batch's new helpers (and any left unverified by a crash)."""
    settings = session.config.library
    candidates = session.store.candidates()
    if settings.admission == "off":  # no check judges them: the library takes them as they are
        admit_as_given(session.store, [c.name for c in candidates], mode="off")
        return
    if not candidates:
        return
    program_agent = program_agent_for(session.config, session.llm, session.executor)
    sampler = program_agent_for(session.config, session.llm, session.executor, sampling=PROGRAM_SAMPLE)
    checks = BehaviourChecks(session.llm, session.executor)
    admission = Admission(session.store, program_agent, session.executor, mode=settings.admission,
                          sampler=sampler, repair=agent.repair if settings.repair else None,
                          checks=checks, batch_id=batch_id, truth=TruthChecks(session.executor),
                          min_uses=settings.admit_min_uses, on_event=on_event)
    decided = admission.decide(candidates, chunk, data.dataset, data.modules, contexts)
    report.admitted, report.not_admitted, report.repaired = decided.admitted, decided.rejected, decided.repaired
    report.not_admitted.update(retire_harmful(session.store, min_uses=settings.retire_min_uses,
                                              below=settings.retire_below))


class _BuildState:
    """Which batches finished and which store run built them, so a rerun resumes (written atomically).

    `{"run_id": N, "finished": [[question ids], ...]}`; a bare list is the older layout.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        data = json.loads(path.read_text()) if path.exists() else {}
        if isinstance(data, list):
            data = {"finished": data}
        self.finished: list[list[str]] = data.get("finished", [])
        self.run_id: int | None = data.get("run_id")

    def done(self, ids: list[str]) -> bool:
        return ids in self.finished

    def mark_done(self, ids: list[str]) -> None:
        self.finished.append(ids)
        self._write()

    def set_run(self, run_id: int) -> None:
        self.run_id = run_id
        self._write()

    def _write(self) -> None:
        with writing(self.path.parent):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.path, json.dumps({"run_id": self.run_id, "finished": self.finished}))
