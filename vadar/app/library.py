"""The learned library as an object: list, show, add and export its functions from Python.

Every call opens the SQLite file for as long as it needs it, so a `Library` may be kept around
(in a notebook, beside a running job) without holding the database open.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api_store import ApiStore, AttemptRecord, FunctionRecord, StoreError
from api_store.evidence import NOT_FINAL, Decision, FunctionStats


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
        learned ones. Returns their names."""
        from vadar.library.hand import add_functions

        is_file = isinstance(source, Path) or ("\n" not in source and source.strip().endswith(".py"))
        text = Path(source).read_text(encoding="utf-8") if is_file else str(source)
        with self._store(create=True) as store:
            return add_functions(store, text)

    def export(self, path: str | Path | None = None, *, programs: bool = False) -> dict[str, Any]:
        """The whole library, every version and attempt (and every run's programs with
        `programs`), as `vadar library export` writes it; also written to `path` when given."""
        import json

        with self._store() as store:
            data = store.export(include_programs=programs)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
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
