"""The learned library as an object: list, show, add, import, export, check and track its functions.

Every call opens the SQLite file for as long as it needs it, so a `Library` may be kept around
(in a notebook, beside a running job) without holding the database open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api_store import ApiStore, AttemptRecord, DuplicateFunctionError, FunctionRecord, StoreError
from api_store.evidence import NOT_FINAL, Decision, FunctionStats
from vadar.app.arguments import check_type

if TYPE_CHECKING:
    from vadar.app.upkeep import LibraryCheck, LibraryTracking, ProgramCheck
    from vadar.config import VadarConfig
    from vadar.library.story import HelperStory
    from vadar.runs.prepare import PreparedData
    from vadar.runs.session import Session


class LibraryError(StoreError):
    """A library that is not there, or a function it does not have."""


@dataclass(frozen=True)
class LibraryEntry:
    """One function of the library with what is known of it: how programs that called it fared on
    build questions, why it was admitted, and its last evaluation (`evidence` of that decision)."""

    function: FunctionRecord
    usage: FunctionStats | None = None
    admission: Decision | None = None
    evaluation: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def signature(self) -> str:
        return self.function.signature

    @property
    def code(self) -> str | None:
        return self.function.code

    def __repr__(self) -> str:
        return f"<{self.name}{self.signature if self.signature.startswith('(') else ''}: {self.function.status.value}>"


@dataclass(frozen=True)
class FunctionDetails:
    """Everything the library keeps of one function: its current version, every version, who
    calls it, its implementation attempts and the decisions taken on it."""

    current: FunctionRecord
    history: list[FunctionRecord]
    dependents: list[str]
    attempts: list[AttemptRecord]
    decisions: list[Decision]

    @property
    def name(self) -> str:
        return self.current.name

    @property
    def story(self) -> HelperStory:
        """How the function got where it is, told from its decisions."""
        import dataclasses

        from vadar.library.story import helper_story

        return helper_story(self.name, [dataclasses.asdict(d) for d in self.decisions])


@dataclass(frozen=True)
class PredefinedModule:
    """A perception module every program has (`loc`, `depth`, ...): its stub as the agents see it."""

    name: str
    stub: str


def predefined_module(name: str) -> PredefinedModule | None:
    """The predefined module called `name` (any case), if there is one."""
    from base_modules.module import PREDEFINED_MODULES, module_stub

    for spec in PREDEFINED_MODULES:
        if spec.name.lower() == name.lower():
            return PredefinedModule(spec.name, module_stub(spec))
    return None


class Library:
    """The library database at `path` (by default the configured one: `vadar.open().library`)."""

    def __init__(self, path: str | Path) -> None:
        check_type("path", path, (str, Path), error=LibraryError, wanted="a database file path")
        if not str(path).strip():
            raise LibraryError("path must name a database file, not an empty text")
        self.path = Path(path)

    @contextmanager
    def _store(self, *, create: bool = False) -> Iterator[ApiStore]:
        if not create and not self.path.exists():
            raise LibraryError(f"no library database at {self.path} (run vadar first, or pass --db)")
        with ApiStore(self.path, create=create) as store:
            yield store

    def list(self, *, include_failed: bool = False) -> list[LibraryEntry]:
        """The current version of every function, in the order they were created (failed ones too
        with `include_failed`). An absent database is an empty library."""
        if not self.path.exists():
            return []
        with self._store() as store:
            records = store.functions(include_failed=include_failed)
            stats = store.function_stats()
            decisions = store.decisions()
        admitted = {d.name: d for d in decisions if d.decision not in NOT_FINAL}
        evaluated = {d.name: d.evidence for d in decisions if d.decision == "evaluated"}
        return [LibraryEntry(r, stats.get(r.name), admitted.get(r.name), evaluated.get(r.name)) for r in records]

    def hidden_failed(self) -> int:
        """How many failed functions `list()` leaves out."""
        if not self.path.exists():
            return 0
        with self._store() as store:
            return len(store.functions(include_failed=True)) - len(store.functions())

    def show(self, name: str) -> FunctionDetails | PredefinedModule:
        """One function with its history; a predefined module's stub for `loc`, `depth`, ..."""
        check_type("name", name, str, error=LibraryError)
        predefined = predefined_module(name)
        if predefined is not None:
            return predefined
        with self._store() as store:
            if name not in store:
                similar = store.find_by_normalized_name(name)
                hint = f"; did you mean {similar.name!r}?" if similar else ""
                raise LibraryError(f"no function named {name!r} in the library at {store.path}{hint}")
            return FunctionDetails(store.current(name), store.history(name), store.dependents(name),
                                   store.attempts(name), store.decisions(name))

    def add(self, source: str | Path) -> list[str]:
        """Add hand-written helpers (`def _name(...)` with docstrings), from a file (a `Path`, or a
        name ending in `.py`) or as source text; they are admitted by hand and shown in prompts like
        learned ones. Returns their names. A file that cannot be read and code that is not helpers
        are a `LibraryError`."""
        from vadar.library.hand import HandLibraryError, add_functions

        check_type("source", source, (str, Path), error=LibraryError, wanted="a file (Path) or source text")
        is_file = isinstance(source, Path) or ("\n" not in source and source.strip().endswith(".py"))
        try:
            text = Path(source).read_text(encoding="utf-8") if is_file else str(source)
        except UnicodeDecodeError as exc:
            raise LibraryError(f"{source} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise LibraryError(f"cannot read {source}: {exc.strerror or exc}") from None
        try:
            with self._store(create=True) as store:
                return add_functions(store, text)
        except (HandLibraryError, SyntaxError) as exc:
            raise LibraryError(str(exc)) from None

    def import_file(self, source: str | Path, *, replace: bool = False, with_build: bool = False) -> list[str]:
        """Import an export of `vadar library export` (every function with its versions, attempts
        and decisions), all or nothing; functions the library has are refused unless `replace`.
        `with_build`: also its build runs (the questions it was built on, so an evaluation can say
        whether it shares their scenes) and its right build programs (the worked examples).
        Returns their names."""
        from vadar.library.importing import LibraryImportError, import_library

        check_type("source", source, (str, Path), error=LibraryError, wanted="a path (str or Path)")
        check_type("replace", replace, bool, error=LibraryError)
        check_type("with_build", with_build, bool, error=LibraryError)
        with self._store(create=True) as store:
            try:
                return import_library(store, Path(source), replace=replace, with_build=with_build)
            except (LibraryImportError, DuplicateFunctionError) as exc:
                raise LibraryError(str(exc)) from None
            except StoreError as exc:  # the export's content refused by the store (`format`, versions)
                if type(exc) is StoreError and "export" in str(exc):
                    raise LibraryError(str(exc)) from None
                raise

    def check(self, prepared: PreparedData, config: VadarConfig, session: Session | None = None, *,
              retire: bool = False) -> LibraryCheck:
        """Every helper against the ground truth its name claims, on `prepared`'s scenes; with
        `retire`, the helpers that fail leave the library (their history stays)."""
        from vadar.app.upkeep import check_library

        with self._store() as store:
            return check_library(store, config, prepared, session, retire=retire)

    def check_programs(self, prepared: PreparedData, config: VadarConfig, session: Session | None = None, *,
                       on_event: Callable[[str], None] | None = None) -> ProgramCheck:
        """Every right build program run on up to `library.scene_checks` other build scenes of
        `prepared`; one wrong there was right by chance and is no longer counted right. No LLM starts."""
        from vadar.app.upkeep import check_programs

        with self._store() as store:
            return check_programs(store, config, prepared, session, on_event)

    def track(self, run: str | Path, baseline: str | Path, *, min_uses: int = 4) -> LibraryTracking:
        """Each helper's programs in the evaluation `run` against `baseline` (a run without the
        library on the same questions); the helpers that did worse over `min_uses` uses retire."""
        from vadar.app.upkeep import track

        for name, path in (("run", run), ("baseline", baseline)):
            check_type(name, path, (str, Path), error=LibraryError, wanted="a run directory")
        with self._store() as store:
            return track(store, Path(run), Path(baseline), min_uses=min_uses)

    def export(self, path: str | Path | None = None, *, programs: bool = False) -> dict[str, Any]:
        """The whole library, every version and attempt (and every run's programs with
        `programs`), as `vadar library export` writes it; also written to `path` when given."""
        import json

        check_type("path", path, (str, Path), optional=True, error=LibraryError, wanted="a file path")
        with self._store() as store:
            data = store.export(include_programs=programs)
        if path is not None:
            target = Path(path)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            except OSError as exc:
                raise LibraryError(f"cannot write {target}: {exc.strerror or exc}") from None
        return data

    def __iter__(self) -> Iterator[LibraryEntry]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self.list())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or not self.path.exists():
            return False
        with self._store() as store:
            return name in store

    def __repr__(self) -> str:
        entries = self.list()
        names = ", ".join(e.name for e in entries[:8]) + (", …" if len(entries) > 8 else "")
        return f"<Library {self.path}: {len(entries)} functions{': ' + names if names else ''}>"
