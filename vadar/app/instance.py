"""`Vadar`: a configured vadar to solve, build and evaluate from Python, and to keep its library.

    import vadar

    with vadar.open() as v:                       # the embedded model, oracle modules
        solution = v.solve("photo.png", "How many red cubes are there?", scene="scenes.json")
        print(solution.answer)

The LLM (the embedded llama.cpp server unless an endpoint is configured), the library store and
the sandbox workers start on the first question that needs them, after its input has been
checked, and stop when the `Vadar` is closed (the `with` block ends).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from base_modules.types import Region
from omni3d_bench.scene_split import scenes_of, split_by_scene
from omni3d_bench.types import DatasetError, Question
from vadar.app.arguments import (PATH_TYPES, check_choice, check_count, check_path, check_settings, check_texts,
                                 check_type, checked_selection, frame_files)
from vadar.app.evaluation import Ablation, Build, Evaluation
from vadar.app.library import Library
from vadar.app.run_dirs import default_run_dir
from vadar.app.solution import Solution
from vadar.config import ConfigError, VadarConfig
from vadar.llm.chat import ChatModel
from vadar.runs.methods import METHODS, make_answerer
from vadar.runs.pipeline import SCOPES, BatchReport, build_api, evaluate
from vadar.runs.validation import ValidationReport
from vadar.runs.prepare import DataSelection, PreparedData, prepare_single
from vadar.runs.progress import Progress
from vadar.runs.manifest import release_run_dir
from vadar.runs.session import Session, open_session

if TYPE_CHECKING:
    from vadar.app.upkeep import LibraryCheck, LibraryTracking
    from vadar.library.sources import DistillReport
    from vadar.llm.bench import BenchReport
    from vadar.llm.embedded import EmbeddedServer
    from vadar.report import ReportResult
    from vadar.runs.evaluation import EvalSummary
    from vadar.runs.gold_eval import GoldReport

PathLike = str | Path


class Vadar:
    """An opened vadar; use it as a context manager (or call `close()`) to release the LLM server,
    the sandbox workers and the library store."""

    def __init__(self, config: VadarConfig, *, modules: Mapping[str, str] | None = None,
                 llm: ChatModel | None = None, progress: Progress | None = None) -> None:
        self.config = config
        self.modules = dict(modules or {})
        """Per-module backends on top of `config.modules`."""
        self.progress = progress if progress is not None else Progress()
        self._llm = llm
        self._resources = ExitStack()
        self._session: Session | None = None
        self._run_dirs: dict[Path, int] = {}
        """The run directories a job of this vadar is writing, and how many jobs (`run` is two)."""

    # ---------------------------------------------------------------- resources

    @property
    def session(self) -> Session:
        """The LLM, store and sandboxes, started on first use and kept until `close()`."""
        check_settings(self.config)  # `v.config` may have changed since open()
        if self._session is None:
            chosen = {"llm": self._llm} if self._llm is not None else {}
            self._session = self._resources.enter_context(open_session(self.config, progress=self.progress, **chosen))
        return self._session

    def close(self) -> None:
        """Stop the embedded server and the sandbox workers, close the store (if started), and let
        other processes write to the run directories this vadar wrote to."""
        self._session = None
        try:
            self._resources.close()
        finally:
            for out_dir in list(self._run_dirs):
                release_run_dir(out_dir)
            self._run_dirs.clear()

    def __enter__(self) -> Vadar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _writing(self, out_dir: Path) -> Iterator[Path]:
        """`out_dir` is this process's to write while the job runs; afterwards, failed or not,
        another process may write to it (the job locks it; the lock is given back here)."""
        key = out_dir.resolve()
        self._run_dirs[key] = self._run_dirs.get(key, 0) + 1
        try:
            yield out_dir
        finally:
            self._run_dirs[key] -= 1
            if not self._run_dirs[key]:
                del self._run_dirs[key]
                release_run_dir(key)

    @property
    def library(self) -> Library:
        """The library this vadar grows and uses (`config.paths.database`)."""
        return Library(self.config.paths.database)

    @property
    def backends(self) -> dict[str, str]:
        """The backend of every perception module."""
        return self.config.modules.resolved(self.modules)

    # ---------------------------------------------------------------- one question

    def solve(self, images: PathLike | Sequence[PathLike], question: str, *, regions: Sequence[PathLike | Region] = (),
              scene: PathLike | None = None, library: bool = True) -> Solution:
        """Answer `question` about one image, or about the frames of one scene (a directory of
        frames, or the files in order) by writing and running a program.

        `regions` stand for the question's `<mask>` tokens in order (a `Region`, a box
        "x0,y0,x1,y1", or a .json/.png/.npy region file); `scene` is the annotation oracle modules
        read (a CLEVR scene file; frames of a generated benchmark find their own). `library=False`
        leaves the learned library out (the static-api method). The input is checked before any
        model starts; a question without a working program is a `Solution` with an `error`.
        """
        check_type("library", library, bool)
        prepared = self.prepare(images, question, regions=regions, scene=scene)
        asked = prepared.questions[0]
        session = self.session
        method = "vadar" if library else "static-api"
        answer, functions = make_answerer(method, session, prepared)
        self.progress.stage(f"solving with {method} ({len(functions)} library functions)")
        self.progress.activity("Program agent: writing and running a program")
        outcome = answer(asked)
        return Solution.of(asked, asked.question if asked.regions else question, outcome, functions)

    def prepare(self, images: PathLike | Sequence[PathLike], question: str, *, regions: Sequence[PathLike | Region] = (),
                scene: PathLike | None = None) -> PreparedData:
        """The checked question `solve` answers, with the modules that will serve it."""
        check_settings(self.config)
        check_type("question", question, str, error=DatasetError)
        if isinstance(regions, (str, bytes)) or not isinstance(regions, Sequence):
            raise DatasetError(f"regions must be a list (one per <mask> token), not {type(regions).__name__}")
        for region in regions:
            check_type("each region", region, (Region, *PATH_TYPES), error=DatasetError,
                       wanted="a Region, a box 'x0,y0,x1,y1' or a region file")
        check_path("scene", scene, optional=True, file=True)
        frames = frame_files(images)
        return prepare_single(frames if len(frames) > 1 else frames[0], question,
                              Path(scene) if scene is not None else None, self.config, self.modules,
                              [r if isinstance(r, Region) else str(r) for r in regions])

    # ---------------------------------------------------------------- data sets

    def select(self, data: PathLike | None = None, *, split: str | None = None, limit: int | None = None,
               skip: int = 0, families: Sequence[str] = (), spread_over: int | None = None,
               shapes: Sequence[str] = (), load: bool = True) -> PreparedData:
        """Questions of a data set (None: the built-in CLEVR sample), checked, with their modules.
        `spread_over`: the `limit` questions are picked across the question shapes of the first
        `spread_over` (after `skip`), not the first `limit` (`runs.prepare.spread_over_shapes`);
        `shapes`: only questions of these shapes ('attribute:spatial', `QuestionShape.label`)."""
        check_settings(self.config)
        selection = checked_selection(data, split, limit, skip, families, spread_over, shapes)
        return selection.prepare(self.config, overrides=self.modules, load=load)

    def _selected(self, data: PathLike | PreparedData | None, **selection: object) -> PreparedData:
        return data if isinstance(data, PreparedData) else self.select(data, **selection)  # type: ignore[arg-type]

    def evaluate(self, data: PathLike | PreparedData | None = None, *, method: str = "vadar",
                 split: str | None = None, limit: int | None = None, skip: int = 0,
                 families: Sequence[str] = (), shapes: Sequence[str] = (), questions: str = "held-out",
                 out: PathLike | None = None, jobs: int | None = None) -> Evaluation:
        """Answer a data set's questions with `method` (vadar, static-api, tool-agent, direct);
        writes `results.jsonl` and the summary to `out` (default runs/<data>-<split>-<method>...)
        as `vadar eval` does, resuming what it finds there.

        `questions`: held-out (never one the library was built from), build, or all. With
        `eval.executor = "ray"` in the config, each question is a task on that Ray cluster.
        """
        from vadar.runs.executors.cluster import open_cluster

        check_choice("method", method, METHODS)
        check_choice("questions scope", questions, SCOPES)
        check_path("out", out, optional=True, error=ConfigError)
        check_count("jobs", jobs, least=1, optional=True)
        check_settings(self.config)
        on_ray = self.config.eval.executor == "ray"
        prepared = self._selected(data, split=split, limit=limit, skip=skip, families=families, shapes=shapes,
                                  load=not on_ray)
        out_dir = Path(out) if out is not None else default_run_dir(data, prepared, method)
        session = self.session
        with self._writing(out_dir), open_cluster(self.config, announce=self.progress.announce) as cluster:
            how = "tasks on Ray" if on_ray else f"{jobs or self.config.eval.jobs} at once"
            self.progress.stage(f"answering questions ({method}, {how})")
            summary = evaluate(session, prepared, out_dir, method=method, scope=questions, cluster=cluster,
                               jobs=jobs)
        return Evaluation(summary, out_dir, method)

    def build(self, data: PathLike | PreparedData | None = None, *, split: str | None = None,
              limit: int | None = None, skip: int = 0, spread_over: int | None = None, batch_size: int = 10,
              batches: int | None = None, out: PathLike | None = None,
              on_batch: Callable[[BatchReport], None] | None = None,
              on_validation: Callable[[ValidationReport], None] | None = None) -> Build:
        """Grow the library from a data set's questions, `batch_size` at a time (the first `batches`
        batches): the Signature agent proposes helpers, the API agent implements them, admission
        keeps those that help. `skip` leaves out the first questions (a library built on them
        grows from the next ones); `spread_over` picks the `limit` build questions across the
        question shapes of the first `spread_over`. Resumes a build interrupted in `out` (default
        runs/<data>-<split>-build)."""
        check_count("batch_size", batch_size, least=1)
        check_count("batches", batches, least=1, optional=True)
        check_path("out", out, optional=True, error=ConfigError)
        for name, callback in (("on_batch", on_batch), ("on_validation", on_validation)):
            if callback is not None and not callable(callback):
                raise ConfigError(f"{name} must be a function or None, not {type(callback).__name__}")
        prepared = self._selected(data, split=split, limit=limit, skip=skip, spread_over=spread_over)
        out_dir = Path(out) if out is not None else default_run_dir(data, prepared, "build")
        session = self.session
        self.progress.stage("building the API")
        validated: list[ValidationReport] = []

        def validation(report: ValidationReport) -> None:
            validated.append(report)
            if on_validation is not None:
                on_validation(report)

        with self._writing(out_dir):
            reports = build_api(session, prepared, out_dir, batch_size=batch_size, batches=batches,
                                on_batch=on_batch, on_validation=validation)
        return Build(out_dir, reports, len(session.store.library()), self.config.paths.database,
                     validated[0] if validated else None)

    def run(self, data: PathLike | None = None, *, split: str | None = None, limit: int | None = None,
            batch_size: int = 10, batches: int = 3, out: PathLike | None = None,
            on_batch: Callable[[BatchReport], None] | None = None,
            on_validation: Callable[[ValidationReport], None] | None = None) -> Evaluation:
        """The main job (`vadar run`): build the library from the questions of the first whole
        scenes (at most `batches` batches, at most half the questions), then answer the questions
        of the other scenes with it."""
        check_count("batch_size", batch_size, least=1)
        check_count("batches", batches, least=1)
        check_path("out", out, optional=True, error=ConfigError)
        prepared = self.select(data, split=split, limit=limit)
        out_dir = Path(out) if out is not None else default_run_dir(data, prepared, "vadar")
        most = min(batches * batch_size, len(prepared.questions) // 2)
        built, tested = split_by_scene(prepared.questions, most)
        if not built and prepared.questions:
            first = sum(q.scene_key == prepared.questions[0].scene_key for q in prepared.questions)
            raise DatasetError(f"the first scene has {first} questions, more than the {most} a build may take "
                               "(at most --batches x --batch-size, at most half the questions): build and test "
                               "never share a scene, so raise --batch-size or --limit")
        self.session  # noqa: B018 (start the LLM before saying what happens)
        self.progress.announce(f"building the API from {len(built)} questions of {_scenes(built)}; "
                               f"the {len(tested)} questions of the other {_scenes(tested)} are evaluated")
        with self._writing(out_dir):
            self.build(dataclasses.replace(prepared, questions=built), out=out_dir, batch_size=batch_size,
                       on_batch=on_batch, on_validation=on_validation)
            return self.evaluate(prepared, out=out_dir)

    # ---------------------------------------------------------------- the library's upkeep

    def distill(self, data: PathLike | PreparedData, *, split: str | None = None,
                on_event: Callable[[str], None] | None = None) -> DistillReport:
        """Distil helpers from the right build programs of the library on `data` now (docs/library.md)."""
        from vadar.app.upkeep import distill

        return distill(self.session, self._selected(data, split=split), on_event)

    def check_library(self, data: PathLike | PreparedData, *, split: str | None = None,
                      retire: bool = False) -> LibraryCheck:
        """Every helper of the library against the ground truth its name claims, on `data`'s scenes
        (CLEVR scenes, a generated benchmark); `retire` retires those that fail. No LLM starts."""
        check_type("retire", retire, bool)
        prepared = self._selected(data, split=split)
        return self.library.check(prepared, self.config, self._session, retire=retire)

    def track(self, run: PathLike, baseline: PathLike) -> LibraryTracking:
        """`Library.track` with the configured `library.retire_min_uses`."""
        check_settings(self.config)
        return self.library.track(run, baseline, min_uses=self.config.library.retire_min_uses)

    # ---------------------------------------------------------------- runs already written

    def rescore(self, run: PathLike, data: PathLike | None = None, *,
                split: str | None = None) -> tuple[EvalSummary, int]:
        """Score the run in `run` again from its stored answers under today's scoring rules (no
        program runs again); returns the new summary and how many scores changed."""
        from vadar.app.past_runs import rescore

        check_path("run", run)
        return rescore(Path(run), self.select(data, split=split))

    @staticmethod
    def compare(runs: Sequence[PathLike], output: PathLike | None = None) -> str:
        """The summaries of several runs side by side, a markdown table (also written to `output`)."""
        from vadar.app.past_runs import compare

        for run in runs:
            check_path("each run", run)
        check_path("output", output, optional=True, error=ConfigError, file=True)
        return compare([Path(r) for r in runs], Path(output) if output is not None else None)

    @staticmethod
    def report(run_dir: PathLike, out: PathLike | None = None, *, data: PathLike | None = None,
               db: PathLike | None = None, single_file: bool = False) -> ReportResult:
        """Write the static HTML report of a run or an ablation (`vadar report`)."""
        from vadar.app.past_runs import report

        check_path("run_dir", run_dir)
        for name, path in (("out", out), ("data", data), ("db", db)):
            check_path(name, path, optional=True)
        return report(Path(run_dir), Path(out) if out is not None else None,
                      data=Path(data) if data is not None else None, db=Path(db) if db is not None else None,
                      single_file=single_file)

    @staticmethod
    def evaluate_gold(data: PathLike | None = None, *, split: str | None = None, limit: int | None = None,
                      on_question: Callable[[], None] | None = None,
                      on_start: Callable[[int], None] | None = None) -> GoldReport:
        """Gold programs (CLEVR's, a generated benchmark's) through the oracle modules, scored: a
        check of modules, data and metric (`vadar eval-gold`)."""
        from vadar.app.past_runs import gold

        check_path("data", data, optional=True)
        check_count("limit", limit, optional=True)
        return gold(Path(data) if data is not None else None, split, limit, on_question, on_start)

    # ---------------------------------------------------------------- the LLM endpoint alone

    def serve_llm(self, *, port: int | None = None, on_loading: Callable[[str], None] | None = None,
                  log_sink: Callable[[str], None] | None = None) -> AbstractContextManager[EmbeddedServer]:
        """The embedded server in the foreground, for a `with` block (`vadar llm serve`)."""
        from vadar.app.endpoint import serve

        check_count("port", port, optional=True)
        check_settings(self.config)
        return serve(self.config, port=port, on_loading=on_loading, log_sink=log_sink)

    def bench_llm(self, *, prompt_tokens: int = 512, max_tokens: int = 64, repeats: int = 2,
                  on_ready: Callable[[str, float], None] | None = None) -> BenchReport:
        """Prompt and decode throughput of the configured endpoint (`vadar llm bench`)."""
        from vadar.app.endpoint import bench

        check_count("prompt_tokens", prompt_tokens, least=1)
        check_count("max_tokens", max_tokens, least=1)
        check_count("repeats", repeats, least=1)
        check_settings(self.config)
        return bench(self.config, prompt_tokens=prompt_tokens, max_tokens=max_tokens, repeats=repeats,
                     on_ready=on_ready)

    def ablate(self, data: PathLike | None = None, *, split: str | None = None, limit: int | None = None,
               grid: Sequence[str] = (), method: str = "vadar", out: PathLike | None = None) -> Ablation:
        """The same questions under several module configurations (`real`, `oracle`, or
        `BASE+slot=backend`; default: all real, all oracle, each module alone oracle), with a table,
        a CSV and a bar chart in `out`. With `eval.executor = "ray"` the configurations run at once."""
        check_texts("grid", grid)
        check_choice("method", method, METHODS)
        check_path("out", out, optional=True, error=ConfigError)
        check_path("data", data, optional=True)
        check_count("limit", limit, optional=True)
        check_settings(self.config)
        from vadar.runs.ablation import default_grid, parse_grid_entry, run_ablation, write_report
        from vadar.runs.executors.cluster import open_cluster

        entries = [parse_grid_entry(entry) for entry in grid] if grid else default_grid()
        selection = DataSelection(Path(data) if data is not None else None, split, limit)
        name = selection.data.resolve().name if selection.data is not None else "sample"
        out_dir = Path(out) if out is not None else Path("runs") / f"ablation-{name}-{method}"
        session = self.session
        with self._writing(out_dir), open_cluster(self.config, announce=self.progress.announce) as cluster:
            report = run_ablation(session, selection, out_dir, entries, method=method, cluster=cluster)
        return Ablation(report, *write_report(report, out_dir))

    def __repr__(self) -> str:
        endpoint = self.config.llm.base_url or "embedded model"
        state = "running" if self._session is not None else "not started"
        return f"<Vadar {endpoint}, modules {_backends_text(self.backends)}, library {self.config.paths.database} ({state})>"


def _scenes(questions: Sequence[Question]) -> str:
    count = len(scenes_of(questions))
    return f"{count} scene{'' if count == 1 else 's'}"


def _backends_text(backends: Mapping[str, str]) -> str:
    chosen = set(backends.values())
    return chosen.pop() if len(chosen) == 1 else ", ".join(f"{k}={v}" for k, v in backends.items())
