"""The jobs users run: build the API over batches of questions, then answer questions with it.

A `Session` holds what every job shares (configuration, LLM, library store, sandbox limits) and is
opened and closed as one unit, so the embedded server and the database never outlive a command.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api_store import ApiStore, DuplicateFunctionError, FunctionRecord, FunctionStatus
from base_modules.module_set import ModuleSet
from base_modules.types import Image
from base_modules.oracle.annotations3d import annotations3d_oracle_modules
from base_modules.oracle.clevr import clevr_oracle_modules
from omni3d_bench import DatasetError, sample_path
from omni3d_bench.datasets import load_dataset
from omni3d_bench.sample import SAMPLE_SPLIT
from omni3d_bench.types import Dataset, Question
from vadar.agents.api import ApiAgent, TestContext, library_functions
from vadar.agents.program import Executor, ProgramOutcome
from vadar.agents.signature import SignatureAgent
from vadar.api_text import render_api
from vadar.config import VadarConfig
from vadar.evaluation import EvalSummary, run_questions, summarize_results, write_summary
from vadar.llm.chat import ChatModel
from vadar.methods import make_answerer
from vadar.llm.usage import UsageTracker
from vadar.results import ResultsFile
from vadar.run_manifest import claim_run_dir, lock_run_dir
from vadar.sandbox import execute


@dataclass
class Session:
    config: VadarConfig
    llm: ChatModel
    store: ApiStore
    usage: UsageTracker
    model_name: str

    @property
    def executor(self) -> Executor:
        limits = self.config.sandbox
        return functools.partial(execute, timeout_s=limits.timeout_s, memory_mb=limits.memory_mb,
                                 max_stdout_chars=limits.max_stdout_chars)


@contextmanager
def open_session(config: VadarConfig, *, llm: ChatModel | None = None) -> Iterator[Session]:
    """Open the store and an LLM (the given one, else the configured or embedded endpoint)."""
    usage = UsageTracker()
    store = ApiStore(config.paths.database)
    try:
        if llm is not None:
            yield Session(config, llm, store, usage, getattr(llm, "model", None) or config.llm.model)
            return
        from vadar.llm.client import build_chat_model
        from vadar.llm.embedded import open_endpoint

        with open_endpoint(config) as base_url, build_chat_model(config, base_url=base_url, usage=usage) as client:
            yield Session(config, client, store, usage, config.llm.model)  # an abort discards pending replies
    finally:
        store.close()


@dataclass(frozen=True)
class DataSelection:
    """Which questions: a data set directory (None: the built-in sample), split, first N."""

    data: Path | None = None
    split: str | None = None
    limit: int | None = None

    def prepare(self, config: VadarConfig | None = None, *,
                overrides: Mapping[str, str] | None = None) -> PreparedData:
        """Load and check everything the questions need, before any LLM or server starts.

        `config.modules` (with per-slot `overrides`) picks oracle, real or plugin modules.
        """
        config = config or VadarConfig()
        root = self.data if self.data is not None else sample_path()
        dataset = load_dataset(root)
        split = self.split or (SAMPLE_SPLIT if self.data is None else _only_split(dataset))
        questions = dataset.questions(split)
        if self.limit is not None:
            questions = questions[: max(self.limit, 0)]
        backends = config.modules.resolved(overrides)
        preflight(dataset, questions, needs_scenes="oracle" in backends.values())
        modules = build_modules(config, oracle=lambda: oracle_modules(dataset), overrides=overrides)
        return PreparedData(dataset, split, questions, modules, backends)


@dataclass(frozen=True)
class PreparedData:
    """Checked questions with their data set and the modules that will serve them."""

    dataset: Dataset
    split: str
    questions: list[Question]
    modules: ModuleSet
    backends: dict[str, str] = field(default_factory=dict)


def _only_split(dataset: Dataset) -> str:
    splits = dataset.splits()
    if len(splits) != 1:
        raise DatasetError(f"{dataset.root}: choose a split with --split (available: {', '.join(splits)})")
    return splits[0]


def oracle_modules(dataset: Dataset) -> ModuleSet:
    """Oracle modules reading the data set's own scene annotations (3D boxes, or CLEVR scenes)."""
    if getattr(dataset, "oracle_kind", None) == "annotations3d":
        return annotations3d_oracle_modules(dataset.scene)
    return clevr_oracle_modules(dataset.scene)


def build_modules(config: VadarConfig, *, oracle: Callable[[], ModuleSet] | None = None,
                  overrides: Mapping[str, str] | None = None) -> ModuleSet:
    """The module set `config.modules` asks for, loaded now so missing weights stop the run early.

    `oracle` builds the oracle modules for the data at hand; `real` builds the model-backed ones
    from `config.vision`; any other name is an entry-point plugin.
    """
    from base_modules.registry import build_module_set

    def no_oracle() -> ModuleSet:
        raise DatasetError("oracle modules need scene annotations (pass --scene), or use --modules real")

    def real() -> ModuleSet:
        from base_modules.real import real_modules

        return real_modules(config.vision)

    spec = {**config.modules.spec(), **dict(overrides or {})}
    modules = build_module_set(spec, default=config.modules.backend,
                               builtins={"oracle": oracle or no_oracle, "real": real})
    for module in modules:
        module.load()  # inside a program a weights error would only make the LLM retry
    return modules


def preflight(dataset: Dataset, questions: Sequence[Question], *, needs_scenes: bool = True) -> None:
    """Fail before any LLM work if an image, or a scene oracle modules need, is missing."""
    for question in questions:
        dataset.image(question)
        if needs_scenes and dataset.scene(question.image_id) is None:
            raise DatasetError(
                f"question {question.question_id}: no scene annotation for image {question.image_id}; "
                "oracle modules need one (add it to the scenes file, or use --modules real)"
            )


def program_namespace(image: Image, modules: ModuleSet,
                      library: Iterable[FunctionRecord] = ()) -> dict[str, Any]:
    """What a program sees: the image handle, the five modules and the given library functions."""
    return {"image": image, **modules.as_namespace(), **library_functions(library)}


def question_namespace(dataset: Dataset, question: Question, modules: ModuleSet,
                       library: Iterable[FunctionRecord] = ()) -> dict[str, Any]:
    """`program_namespace` for a question of a data set."""
    return program_namespace(dataset.image(question), modules, library)


# ---------------------------------------------------------------- answering questions


def evaluate(
    session: Session,
    data: PreparedData,
    out_dir: Path,
    *,
    method: str = "vadar",
    show_progress: bool = True,
) -> EvalSummary:
    """Answer the selected questions with `method` (resuming from `out_dir`), write results and summary."""
    dataset, split, questions = data.dataset, data.split, data.questions
    store = session.store
    answer, library = make_answerer(method, session, data)
    claim_run_dir(out_dir, {"data": str(dataset.root), "split": split, "method": method,
                            "modules": data.backends, "model": session.model_name})
    limits = dataclasses.asdict(session.config.agents)
    run = store.start_run("eval", model=session.model_name,
                          config={"data": str(dataset.root), "split": split, "method": method, "agents": limits})

    def solve(question: Question) -> ProgramOutcome:
        outcome = answer(question)
        store.record_program(
            run.id, question.question_id, code=outcome.program, answer=outcome.answer,
            error=outcome.error, attempts=outcome.attempts, prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens, latency_s=outcome.seconds,
        )
        return outcome

    results = run_questions(questions, solve, ResultsFile(out_dir / "results.jsonl"),
                            method=method, show_progress=show_progress)
    used = _library_functions_used(results, [f.name for f in library])
    header = {
        "name": out_dir.name, "data": str(dataset.root), "split": split, "method": method,
        "model": session.model_name, "library_functions": len(library),
        "library_functions_used": len(used), "agent_limits": limits,
        "llm_usage_this_session": session.usage.totals().as_dict(),
    }
    summary = summarize_results(results, header)
    write_summary(summary, out_dir)
    store.finish_run(run.id)
    return summary


def _library_functions_used(results: Sequence[Any], names: Sequence[str]) -> set[str]:
    return {n for r in results if r.program for n in names if f"{n}(" in r.program}


# ---------------------------------------------------------------- building the API


@dataclass
class BatchReport:
    index: int
    question_ids: list[str]
    proposed: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    implemented: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
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
) -> list[BatchReport]:
    """Signature agent then API agent, batch after batch; each batch builds on the last."""
    dataset, split, questions, modules = data.dataset, data.split, data.questions, data.modules
    store = session.store
    lock_run_dir(out_dir)
    state = _BuildState(out_dir / "build_state.json")
    chunks = [questions[i:i + batch_size] for i in range(0, len(questions), batch_size)]
    if batches is not None:
        chunks = chunks[:batches]
    run = store.start_run("build-api", model=session.model_name,
                          config={"data": str(dataset.root), "split": split, "batch_size": batch_size,
                                  "agents": dataclasses.asdict(session.config.agents)})
    reports = []
    for index, chunk in enumerate(chunks):
        ids = [q.question_id for q in chunk]
        if state.done(ids):
            report = BatchReport(index, ids, skipped=True)
        else:
            report = _build_batch(session, dataset, modules, chunk, index, run.id, on_event)
            state.mark_done(ids)
        reports.append(report)
        if on_batch is not None:
            on_batch(report)
    store.finish_run(run.id)
    return reports


def _build_batch(session: Session, dataset: Dataset, modules: ModuleSet, chunk: Sequence[Question],
                 index: int, run_id: int, on_event: Callable[[str], None] | None) -> BatchReport:
    store = session.store
    report = BatchReport(index, [q.question_id for q in chunk])
    batch = store.start_batch(run_id, report.question_ids, index=index)
    provenance = {"run_id": run_id, "batch_id": batch.id, "model": session.model_name}
    api_text = render_api(store.functions(FunctionStatus.IMPLEMENTED))
    existing = [f.name for f in store.functions()]
    if on_event:
        on_event(f"batch {index + 1}: proposing signatures for {len(chunk)} questions")
    limits = session.config.agents
    signature_agent = SignatureAgent(session.llm, max_attempts=limits.signature_attempts,
                                     max_functions=limits.max_new_functions)
    proposals = signature_agent.propose([q.question for q in chunk], api_text, existing)
    report.rejected = [f"{stub.name}: {reason}" for stub, reason in proposals.rejected]
    for stub in proposals.accepted:
        try:
            store.propose(stub.name, stub.signature, stub.docstring, **provenance)
            report.proposed.append(stub.name)
        except DuplicateFunctionError as exc:
            report.rejected.append(f"{stub.name}: {exc}")
    pending = [f.name for f in store.functions(FunctionStatus.PROPOSED)]  # leftovers of a crash too
    contexts = [TestContext(q.question, question_namespace(dataset, q, modules)) for q in chunk]
    agent = ApiAgent(session.llm, store, session.executor, max_attempts=limits.implementation_attempts,
                     on_event=on_event, **provenance)
    outcome = agent.implement(pending, contexts)
    report.implemented, report.failed = outcome.implemented, outcome.failed
    return report


class _BuildState:
    """Which batches finished, so a rerun after a crash skips them (written atomically)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.finished: list[list[str]] = json.loads(path.read_text()) if path.exists() else []

    def done(self, ids: list[str]) -> bool:
        return ids in self.finished

    def mark_done(self, ids: list[str]) -> None:
        self.finished.append(ids)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.finished))
        os.replace(temporary, self.path)
