"""The build job: the library grown over batches of build questions, then the validation gate over them.

`runs/` only orchestrates here: it cuts the questions into batches, keeps a resumable record of
which finished (`build_state.json` and the store's run), and hands each batch, as one
`BuildBatch`, to the library's routes: proposals (`vadar.library.proposals`) and distillation
(`vadar.runs.distillation`, over `vadar.library.distill` and `clusters`). What a helper must
show to join the library is the library's business, not this module's. Each batch's report, and
`coverage.json` at the end, say the build's coverage (`vadar.library.coverage`); `build_cost.json`,
after each batch and at the end, what it spent stage by stage (`vadar.runs.build_cost`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api_store import ApiStore, RunRecord, RunStatus, StoreError
from omni3d_bench.types import Question
from vadar.agents.helper_search import SearchRecord
from vadar.agents.program import ProgramAgent
from vadar.library.batch import BuildBatch
from vadar.library.coverage import COVERAGE_FILE, Coverage, coverage_of
from vadar.library.proposals import proposal_route
from vadar.library.shape_route import ShapeReport, shape_route
from vadar.llm.usage import usage_scope
from vadar.programs.sampling import Sampling
from vadar.runs.build_history import earlier_build_questions
from vadar.runs.build_cost import (COST_FILE, DISTILLATION, PROPOSALS, SHAPES, VALIDATION, BuildCost, batch_scope,
                                   build_cost)
from vadar.runs.distillation import distill_batch
from vadar.runs.manifest import lock_run_dir
from vadar.runs.methods import program_agent_for
from vadar.runs.prepare import PreparedData
from vadar.runs.session import Session
from vadar.runs.storage import write_text_atomically, writing
from vadar.runs.validation import BuiltBatch, ValidationReport, validate_library


@dataclass
class BatchReport:
    """What one batch did: its proposals' way through the gate, and what distillation added."""

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
    from_queue: list[str] = field(default_factory=list)  # cut by an earlier batch's cap, implemented here
    queued: list[str] = field(default_factory=list)  # cut by this batch's cap: waiting for the next
    signature_requests: int = 0  # Signature agent replies this batch asked for
    signature_skipped: bool = False  # every step of its questions covered, nothing waiting: no request
    coverage: Coverage | None = None  # of the build questions so far, after this batch
    shapes: ShapeReport | None = None  # the question-shape helpers tried after the step route


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
    session = build_session(session)
    dataset, split, questions = data.dataset, data.split, data.questions
    store, progress = session.store, session.progress
    lock_run_dir(out_dir)
    state = _BuildState(out_dir / "build_state.json")
    chunks = [questions[i:i + batch_size] for i in range(0, len(questions), batch_size)]
    if batches is not None:
        chunks = chunks[:batches]
    validation = session.config.library.validation
    config = {"data": str(dataset.root), "split": split, "batch_size": batch_size,
              "agents": dataclasses.asdict(session.config.agents), "validation": validation}
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

    built = tuple(q for chunk in chunks for q in chunk)  # never a question `batches` leaves unbuilt
    earlier = earlier_build_questions(store, dataset, split, exclude={q.question_id for q in questions})
    build = _Build(session, data, out_dir, state, run.id, built, earlier, event, on_validation)
    reports = []
    try:
        for index, chunk in enumerate(chunks):
            ids = [q.question_id for q in chunk]
            progress.batch(index, len(chunks))
            if state.done(ids):
                report = BatchReport(index, ids, skipped=True)
            else:
                built_from = [q for done in chunks[:index + 1] for q in done]
                with usage_scope(batch_scope(index)):
                    report = _build_batch(build, chunk, index, built_from)
                state.mark_done(ids)
                _write_cost(build, len(built_from))
            reports.append(report)
            if on_batch is not None:
                on_batch(report)
        if validation and chunks:
            with usage_scope(VALIDATION):
                _validate(build, chunks)
        _write_coverage(build, [q for chunk in chunks for q in chunk])
        _write_cost(build, len(built))
    except KeyboardInterrupt:
        store.finish_run(run.id, RunStatus.INTERRUPTED)
        raise
    except BaseException:
        store.finish_run(run.id, RunStatus.FAILED)
        raise
    store.finish_run(run.id, RunStatus.FINISHED)
    return reports


@dataclass(frozen=True)
class _Build:
    """One build as its steps see it: where it runs, what it records, whom it tells."""

    session: Session
    data: PreparedData
    out_dir: Path
    state: _BuildState
    run_id: int
    scenes: tuple[Question, ...]  # the questions of the batches built: ground truth comes from their scenes only
    earlier: tuple[Question, ...]  # questions earlier build runs of this library were shown
    on_event: Callable[[str], None]
    on_validation: Callable[[ValidationReport], None] | None


def _validate(build: _Build, chunks: Sequence[Sequence[Question]]) -> None:
    """The validation gate over the built batches, each judged with the library left without it;
    run once per set of built batches (a rerun of a validated build does not validate again, one
    that built more batches does)."""
    session = build.session
    built = [[q.question_id for q in chunk] for chunk in chunks]
    if build.state.validated == built:
        return
    batches = [BuiltBatch(batch_id, tuple(chunk))
               for batch_id, chunk in zip(_batch_ids(session.store, build.run_id, built), chunks, strict=True)]
    session.progress.batch(len(chunks), len(chunks) + 1)
    report = validate_library(session, build.data, batches, build.on_event)
    write_text_atomically(build.out_dir / "validation.json", json.dumps(report.to_dict(), indent=2, default=str))
    build.state.mark_validated(built)
    if build.on_validation is not None:
        build.on_validation(report)


def _write_coverage(build: _Build, built: Sequence[Question]) -> Coverage:
    """The build's coverage at its end (after the validation gate), written to `coverage.json`."""
    coverage = coverage_of([q.question for q in built], build.session.store.library())
    write_text_atomically(build.out_dir / COVERAGE_FILE, json.dumps(coverage.to_dict(), indent=2))
    build.on_event(coverage.line())
    return coverage


def _write_cost(build: _Build, questions: int) -> BuildCost:
    """What the build spent so far in this run, written to `build_cost.json`."""
    cost = build_cost(build.session.usage, questions)
    write_text_atomically(build.out_dir / COST_FILE, json.dumps(cost.to_dict(), indent=2))
    return cost


def _batch_ids(store: ApiStore, run_id: int, built: list[list[str]]) -> list[int]:
    """The store batch that built each batch's questions: this run's, or the one of an earlier build
    run whose finished batch this run skipped (its helpers carry that batch's id)."""
    built_by = {tuple(b.question_ids): b.id for run in store.runs("build-api") for b in store.batches(run.id)}
    return [built_by[tuple(ids)] if tuple(ids) in built_by else store.start_batch(run_id, ids, index=index).id
            for index, ids in enumerate(built)]


def build_session(session: Session) -> Session:
    """The session a build writes its programs in: at most `library.build_program_attempts` replies
    per program. A build's later replies to a failing program were almost never right; a wrong
    build question gets another, sampled program from `library.build_tries` instead."""
    agents = session.config.agents
    attempts = min(agents.program_attempts, session.config.library.build_program_attempts)
    if attempts == agents.program_attempts:
        return session
    config = dataclasses.replace(session.config, agents=dataclasses.replace(agents, program_attempts=attempts))
    return dataclasses.replace(session, config=config)


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


def _build_batch(build: _Build, chunk: Sequence[Question], index: int, built_from: Sequence[Question]) -> BatchReport:
    """One batch: the proposal route and the question-shape route (when `library.propose`), then
    distillation."""
    session = build.session
    report = BatchReport(index, [q.question_id for q in chunk])
    record = session.store.start_batch(build.run_id, report.question_ids, index=index)
    batch = _batch(build, chunk, index, built_from, record.id)
    if session.config.library.propose:
        with usage_scope(PROPOSALS):
            proposed = proposal_route(batch, record)
        report.proposed, report.rejected, report.reused = proposed.proposed, proposed.rejected, proposed.reused
        report.implemented, report.failed, report.attempts = proposed.implemented, proposed.failed, proposed.attempts
        report.admitted, report.not_admitted = proposed.admitted, proposed.not_admitted
        report.repaired, report.searches = proposed.repaired, proposed.searches
        report.from_queue, report.queued = proposed.from_queue, proposed.queued
        report.signature_requests, report.signature_skipped = proposed.signature_requests, proposed.signature_skipped
        with usage_scope(SHAPES):
            report.shapes = shape_route(batch)
    with usage_scope(DISTILLATION):
        distilled = distill_batch(session, build.data, batch)
    if distilled is not None:
        report.distilled = distilled.admitted
        report.not_admitted.update(distilled.rejected)
    report.coverage = coverage_of([q.question for q in built_from], session.store.library())
    return report


def _batch(build: _Build, chunk: Sequence[Question], index: int, built_from: Sequence[Question],
           batch_id: int) -> BuildBatch:
    session, data = build.session, build.data

    def writer(sampling: Sampling) -> ProgramAgent:
        return program_agent_for(session.config, session.llm, session.executor, sampling)

    return BuildBatch(session.store, session.llm, session.executor, data.dataset, data.modules, tuple(chunk),
                      tuple(built_from), build.scenes, index, build.run_id, batch_id, session.model_name,
                      session.config.library, session.config.agents, writer, build.on_event, build.earlier,
                      data.view_modules)


class _BuildState:
    """Which batches finished and which store run built them, so a rerun resumes (written atomically).

    `{"run_id": N, "finished": [[question ids], ...], "validated": [[question ids], ...]}` (the batches
    the validation gate last judged); a bare list is the older layout.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        data = json.loads(path.read_text()) if path.exists() else {}
        if isinstance(data, list):
            data = {"finished": data}
        self.finished: list[list[str]] = data.get("finished", [])
        self.run_id: int | None = data.get("run_id")
        validated = data.get("validated")
        self.validated: list[list[str]] | None = validated if isinstance(validated, list) else None

    def done(self, ids: list[str]) -> bool:
        return ids in self.finished

    def mark_done(self, ids: list[str]) -> None:
        self.finished.append(ids)
        self._write()

    def mark_validated(self, batches: list[list[str]]) -> None:
        self.validated = batches
        self._write()

    def set_run(self, run_id: int) -> None:
        self.run_id = run_id
        self._write()

    def _write(self) -> None:
        with writing(self.path.parent):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.path, json.dumps({"run_id": self.run_id, "finished": self.finished,
                                                     "validated": self.validated}))
