"""The shared core of `ApiStore`: one connection, one lock, and the transaction helpers.

The lock makes one store object safe to share between threads (e.g. a thread pool answering
questions in parallel): each public method holds it for its whole transaction or snapshot.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from api_store.connection import read_snapshot, storage_failure, write_transaction


class StoreBase:
    """Holds the connection; subclasses add the domain methods."""

    def __init__(self, db: Database, path: Path | None) -> None:
        self._db = db
        self._path = path
        self._lock = threading.RLock()

    @property
    def path(self) -> Path | None:
        """The database file, or `None` for an in-memory store."""
        return self._path

    @property
    def db(self) -> Database:
        """The underlying sqlite-utils database, for ad-hoc read-only queries and inspection."""
        return self._db

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> StoreBase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several store calls so they commit together or not at all.

        Blocks nest (inner ones become savepoints); every write method already uses one.
        """
        with self._lock, self._storage_failures(), write_transaction(self._db):
            yield

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        with self._lock, self._storage_failures(), read_snapshot(self._db):
            yield

    @contextlib.contextmanager
    def _storage_failures(self) -> Iterator[None]:
        """A full disk, a read-only file or a damaged file becomes one `StoreError` naming the file."""
        try:
            yield
        except (sqlite3.DatabaseError, OSError) as exc:
            failure = storage_failure(self._path, exc)
            if failure is None:
                raise
            raise failure from exc

    def _insert(self, table: str, record: dict[str, Any]) -> int:
        """Insert one row and return its primary key."""
        pk = self._db[table].insert(record).last_pk
        assert isinstance(pk, int)
        return pk

    def _rows(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        return list(self._db.query(sql, params))

    def _row(self, sql: str, params: Any = None) -> dict[str, Any] | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None
