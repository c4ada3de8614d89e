"""`vadar.open()`: a configured vadar to solve, build and evaluate from Python.

    import vadar

    with vadar.open() as v:                       # the embedded model, oracle modules
        solution = v.solve("photo.png", "How many red cubes are there?", scene="scenes.json")
        print(solution.answer)

The LLM (the embedded llama.cpp server unless an endpoint is configured), the library store and
the sandbox workers start on the first question that needs them, after its input has been
checked, and stop when the `Vadar` is closed (the `with` block ends).
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

from base_modules.registry import BackendError, backend_name, parse_assignment
from base_modules.types import Region
from omni3d_bench.datasets.single import video_frames
from omni3d_bench.types import DatasetError
from vadar.app.evaluation import Build, Evaluation
from vadar.app.library import Library
from vadar.app.run_dirs import default_run_dir
from vadar.app.solution import Solution
from vadar.config import ConfigError, VadarConfig, check_config, load_config
from vadar.llm.chat import ChatModel
from vadar.runs.methods import METHODS, make_answerer
from vadar.runs.pipeline import SCOPES, BatchReport, build_api, evaluate
from vadar.runs.validation import ValidationReport
from vadar.runs.prepare import DataSelection, PreparedData, prepare_single
from vadar.runs.progress import Progress
from vadar.runs.session import Session, open_session

PathLike = str | Path
Images = PathLike | Sequence[PathLike]
"""One image file, a directory of frames (file-name order), or the frame files in order."""


def open(config: VadarConfig | PathLike | None = None, *, base_url: str | None = None,  # noqa: A001
         model: str | None = None, modules: str | Mapping[str, str] | None = None,
         home: PathLike | None = None, llm: ChatModel | None = None,
         progress: Progress | None = None, quiet: bool = False) -> Vadar:
    """A configured vadar: the settings from `config` (a `VadarConfig`, or a TOML file; default:
    `$VADAR_CONFIG`, `vadar.toml`, `VADAR_*` variables), then these keywords:

    - `base_url`, `model`: an OpenAI-compatible endpoint instead of the embedded model;
    - `modules`: the backend of every perception module (`"oracle"`, `"real"`, a plugin name), or
      a backend per module (`{"depth": "real"}`);
    - `home`: where the library and the response cache live (`VADAR_HOME`);
    - `llm`: any `ChatModel` to ask instead of an endpoint (a scripted one in tests);
    - `progress`: a `Progress` told what happens (the command line's live status); by default the
      lines worth keeping (the model assembled, the server started, a run resumed) go to stderr,
      and `quiet=True` drops them too.
    """
    if isinstance(config, VadarConfig):
        settings = copy.deepcopy(config)
    else:
        settings = load_config(Path(config) if config is not None else None)
    if base_url is not None:
        settings.llm.base_url = base_url
    if model is not None:
        settings.llm.model = model
    if home is not None:
        settings.paths.home = Path(home)
    overrides: dict[str, str] = {}
    try:
        if isinstance(modules, str):
            settings.modules.backend = backend_name(modules, slot="modules")
        elif modules is not None:
            overrides = dict(parse_assignment(f"{slot}={backend}") for slot, backend in modules.items())
    except BackendError as exc:
        raise ConfigError(str(exc)) from None
    check_config(settings)  # a bad setting, given here or by hand, is one line now, not a failure later
    settings.modules.resolved(overrides)  # an unknown module or backend fails here, not later
    if progress is None:
        progress = Progress() if quiet else Announcements()
    return Vadar(settings, modules=overrides, llm=llm, progress=progress)


class Announcements(Progress):
    """Prints the lines worth keeping (the embedded model assembled and started, a run resumed) to
    stderr, so a first start that takes a minute is not silent; everything else stays quiet."""

    def announce(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)


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

    # ---------------------------------------------------------------- resources

    @property
    def session(self) -> Session:
        """The LLM, store and sandboxes, started on first use and kept until `close()`."""
        if self._session is None:
            chosen = {"llm": self._llm} if self._llm is not None else {}
            self._session = self._resources.enter_context(open_session(self.config, progress=self.progress, **chosen))
        return self._session

    def close(self) -> None:
        """Stop the embedded server and the sandbox workers and close the store (if started)."""
        self._session = None
        self._resources.close()

    def __enter__(self) -> Vadar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def library(self) -> Library:
        """The library this vadar grows and uses (`config.paths.database`)."""
        return Library(self.config.paths.database)

    @property
    def backends(self) -> dict[str, str]:
        """The backend of every perception module."""
        return self.config.modules.resolved(self.modules)

    # ---------------------------------------------------------------- one question

    def solve(self, images: Images, question: str, *, regions: Sequence[PathLike | Region] = (),
              scene: PathLike | None = None, library: bool = True) -> Solution:
        """Answer `question` about one image, or about the frames of one scene (a directory of
        frames, or the files in order) by writing and running a program.

        `regions` stand for the question's `<mask>` tokens in order (a `Region`, a box
        "x0,y0,x1,y1", or a .json/.png/.npy region file); `scene` is the annotation oracle modules
        read (a CLEVR scene file; frames of a generated benchmark find their own). `library=False`
        leaves the learned library out (the static-api method). The input is checked before any
        model starts; a question without a working program is a `Solution` with an `error`.
        """
        prepared = self.prepare(images, question, regions=regions, scene=scene)
        asked = prepared.questions[0]
        session = self.session
        method = "vadar" if library else "static-api"
        answer, functions = make_answerer(method, session, prepared)
        self.progress.stage(f"solving with {method} ({len(functions)} library functions)")
        self.progress.activity("Program agent: writing and running a program")
        outcome = answer(asked)
        return Solution.of(asked, asked.question if asked.regions else question, outcome, functions)

    def prepare(self, images: Images, question: str, *, regions: Sequence[PathLike | Region] = (),
                scene: PathLike | None = None) -> PreparedData:
        """The checked question `solve` answers, with the modules that will serve it."""
        frames = frame_files(images)
        return prepare_single(frames if len(frames) > 1 else frames[0], question,
                              Path(scene) if scene is not None else None, self.config, self.modules,
                              [r if isinstance(r, Region) else str(r) for r in regions])

    # ---------------------------------------------------------------- data sets

    def select(self, data: PathLike | None = None, *, split: str | None = None, limit: int | None = None,
               skip: int = 0, families: Sequence[str] = (), load: bool = True) -> PreparedData:
        """Questions of a data set (None: the built-in CLEVR sample), checked, with their modules."""
        selection = DataSelection(Path(data) if data is not None else None, split, limit, skip, tuple(families))
        return selection.prepare(self.config, overrides=self.modules, load=load)

    def evaluate(self, data: PathLike | PreparedData | None = None, *, method: str = "vadar",
                 split: str | None = None, limit: int | None = None, skip: int = 0,
                 families: Sequence[str] = (), questions: str = "held-out", out: PathLike | None = None,
                 jobs: int | None = None) -> Evaluation:
        """Answer a data set's questions with `method` (vadar, static-api, tool-agent, direct);
        writes `results.jsonl` and the summary to `out` (default runs/<data>-<split>-<method>...)
        as `vadar eval` does, resuming what it finds there.

        `questions`: held-out (never one the library was built from), build, or all. With
        `eval.executor = "ray"` in the config, each question is a task on that Ray cluster.
        """
        from vadar.runs.executors.cluster import open_cluster

        if method not in METHODS:
            raise ConfigError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
        if questions not in SCOPES:
            raise ConfigError(f"unknown questions scope {questions!r}; choose one of: {', '.join(SCOPES)}")
        on_ray = self.config.eval.executor == "ray"
        prepared = data if isinstance(data, PreparedData) else self.select(
            data, split=split, limit=limit, skip=skip, families=families, load=not on_ray)
        out_dir = Path(out) if out is not None else default_run_dir(data, prepared, method)
        session = self.session
        with open_cluster(self.config, announce=self.progress.announce) as cluster:
            how = "tasks on Ray" if on_ray else f"{jobs or self.config.eval.jobs} at once"
            self.progress.stage(f"answering questions ({method}, {how})")
            summary = evaluate(session, prepared, out_dir, method=method, scope=questions, cluster=cluster,
                               jobs=jobs)
        return Evaluation(summary, out_dir, method)

    def build(self, data: PathLike | PreparedData | None = None, *, split: str | None = None,
              limit: int | None = None, batch_size: int = 10, batches: int | None = None,
              out: PathLike | None = None, on_batch: Callable[[BatchReport], None] | None = None,
              on_validation: Callable[[ValidationReport], None] | None = None) -> Build:
        """Grow the library from a data set's questions, `batch_size` at a time (the first `batches`
        batches): the Signature agent proposes helpers, the API agent implements them, admission
        keeps those that help. Resumes a build interrupted in `out` (default runs/<data>-<split>-build)."""
        prepared = data if isinstance(data, PreparedData) else self.select(data, split=split, limit=limit)
        out_dir = Path(out) if out is not None else default_run_dir(data, prepared, "build")
        session = self.session
        self.progress.stage("building the API")
        validated: list[ValidationReport] = []

        def validation(report: ValidationReport) -> None:
            validated.append(report)
            if on_validation is not None:
                on_validation(report)

        reports = build_api(session, prepared, out_dir, batch_size=batch_size, batches=batches, on_batch=on_batch,
                            on_validation=validation)
        return Build(out_dir, reports, len(session.store.functions("implemented")), self.config.paths.database,
                     validated[0] if validated else None)

    def run(self, data: PathLike | None = None, *, split: str | None = None, limit: int | None = None,
            batch_size: int = 10, batches: int = 3, out: PathLike | None = None,
            on_batch: Callable[[BatchReport], None] | None = None,
            on_validation: Callable[[ValidationReport], None] | None = None) -> Evaluation:
        """The main job (`vadar run`): build the library from the first `batches` batches (at most
        half the questions), then answer the other questions with it."""
        prepared = self.select(data, split=split, limit=limit)
        out_dir = Path(out) if out is not None else default_run_dir(data, prepared, "vadar")
        built = prepared.questions[:min(batches * batch_size, len(prepared.questions) // 2)]
        self.session  # noqa: B018 (start the LLM before saying what happens)
        self.progress.announce(f"building the API from {len(built)} questions; the other "
                               f"{len(prepared.questions) - len(built)} are evaluated")
        self.build(dataclasses.replace(prepared, questions=built), out=out_dir, batch_size=batch_size,
                   on_batch=on_batch, on_validation=on_validation)
        return self.evaluate(prepared, out=out_dir)

    def __repr__(self) -> str:
        endpoint = self.config.llm.base_url or "embedded model"
        state = "running" if self._session is not None else "not started"
        return f"<Vadar {endpoint}, modules {_backends_text(self.backends)}, library {self.config.paths.database} ({state})>"


def _backends_text(backends: Mapping[str, str]) -> str:
    chosen = set(backends.values())
    return chosen.pop() if len(chosen) == 1 else ", ".join(f"{k}={v}" for k, v in backends.items())


def frame_files(images: Images) -> list[Path]:
    """The pictures a question is about: one file, the frames of a directory, or files in order."""
    if isinstance(images, (str, Path)):
        path = Path(images)
        return video_frames(path) if path.is_dir() else [path]
    files = [Path(p) for p in images]
    if not files:
        raise DatasetError("no image given: pass an image file, a directory of frames, or a list of frames")
    return files

