"""`ApiStore`: the public facade that opens the database, migrates it and exports it."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from api_store.connection import BUSY_TIMEOUT_S, open_database, unusable_reason, utc_now
from api_store.errors import StoreError
from api_store.evidence import EvidenceMixin
from api_store.functions import FunctionsMixin
from api_store.group_attempts import GroupAttemptsMixin
from api_store.imports import EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ImportMixin
from api_store.migrate import applied_migrations, apply_migrations
from api_store.migrations import MIGRATIONS
from api_store.runs import RunsMixin



@contextlib.contextmanager
def _opening_lock(path: Path | None, *, create: bool) -> Iterator[None]:
    """Serialise creating and migrating one database file between processes.

    SQLite creates an empty file on connect and writes its header with the first migration; a
    second process opening in between would take the new file for a truncated one.
    Where no lock file can be made (a read-only directory) the store opens without one.
    """
    if path is None or not create or path.is_dir():
        yield
        return
    lock = FileLock(str(path.with_name(path.name + ".lock")), timeout=BUSY_TIMEOUT_S)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except (OSError, Timeout):
        yield
        return
    try:
        yield
    finally:
        lock.release()


class ApiStore(FunctionsMixin, RunsMixin, EvidenceMixin, GroupAttemptsMixin, ImportMixin):
    """The persistent, versioned library of generated functions plus run provenance.

    `ApiStore(path)` opens or creates the file (and its parent directory) and applies pending
    migrations; `create=False` refuses a missing file instead. Use as a context manager, or
    call `close()`.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        resolved = None if str(path) == ":memory:" else Path(path).expanduser()
        with _opening_lock(resolved, create=create):
            super().__init__(open_database(resolved, create=create), resolved)
            self._migrate()

    @classmethod
    def memory(cls) -> ApiStore:
        """A throw-away store in memory, for tests and dry runs (same as `ApiStore(":memory:")`)."""
        return cls(":memory:")

    def __enter__(self) -> ApiStore:
        return self

    def __repr__(self) -> str:
        return f"ApiStore({str(self.path) if self.path else ':memory:'!r})"

    def _migrate(self) -> None:
        try:
            with self._lock:
                apply_migrations(self._db, MIGRATIONS)
        except sqlite3.Error as exc:  # e.g. a read-only file that still needs migrating
            self._db.close()
            reason = unusable_reason(self.path, exc) if self.path is not None else str(exc)
            raise StoreError(f"cannot prepare the library database {self.path}: {reason}") from exc
        except BaseException:
            self._db.close()
            raise

    def migrations(self) -> list[tuple[str, str]]:
        """`(name, applied_at)` for each applied schema migration, in order."""
        with self._snapshot():
            return applied_migrations(self._db)

    def export(self, *, include_programs: bool = False) -> dict[str, Any]:
        """The whole library as a JSON-able dict: every function with its full history.

        Shape: `{"format", "format_version", "exported_at", "migrations", "functions": [
        {<current version fields>, "history": [{<version fields>, "attempts": [...]}, ...]}],
        "runs": [{<run fields>, "batches": [...]}], "decisions": [...], "verified_programs": [...],
        "group_attempts": [...]}`,
        plus `"programs"` if asked for.
        """
        with self._snapshot():
            functions = []
            for current in self.functions(include_failed=True):
                entry = current.to_dict()
                attempts_by_version: dict[int, list[dict[str, Any]]] = {}
                for attempt in self.attempts(current.name):
                    attempts_by_version.setdefault(attempt.version, []).append(attempt.to_dict())
                entry["history"] = [
                    {**version.to_dict(), "attempts": attempts_by_version.get(version.version, [])}
                    for version in self.history(current.name)
                ]
                functions.append(entry)
            runs = [
                {**run.to_dict(), "batches": [b.to_dict() for b in self.batches(run.id)]}
                for run in self.runs()
            ]
            data: dict[str, Any] = {
                "format": EXPORT_FORMAT,
                "format_version": EXPORT_FORMAT_VERSION,
                "exported_at": utc_now(),
                "migrations": [name for name, _ in self.migrations()],
                "functions": functions,
                "runs": runs,
                "decisions": [dataclasses.asdict(d) for d in self.decisions()],
                "verified_programs": [dataclasses.asdict(v) for v in self.verified_programs()],
                "group_attempts": [dataclasses.asdict(g) for g in self.group_attempts()],
            }
            if include_programs:
                data["programs"] = [
                    p.to_dict() for run in self.runs() for p in self.programs(run.id)
                ]
        return data
