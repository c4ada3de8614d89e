"""Persistent SQLite cache of chat responses, keyed by the sha256 of the canonical request.

Re-running an experiment then costs nothing and gives identical answers. The file uses WAL so several
processes can share it; each entry is written in one transaction, so readers never see half of one.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlite_utils

from vadar.llm.chat import ChatResponse, canonical_json
from vadar.llm.errors import LLMCacheError

_TABLE = "responses"


class ResponseCache:
    """Maps request keys to stored `ChatResponse`s in one SQLite file.

    Each operation opens and closes its own connection: an LLM call takes seconds, a connection
    microseconds, and no connection is ever held open across a `fork()` (SQLite forbids that, and a
    forked worker pool writing through an inherited one silently loses entries).
    """

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._error("cannot be created", exc) from exc
        with self._connect("cannot open") as db:
            db.enable_wal()
            if _TABLE not in db.table_names():
                db.execute("BEGIN IMMEDIATE")
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS {_TABLE} ("
                    " key TEXT PRIMARY KEY, model TEXT, request TEXT NOT NULL,"
                    " response TEXT NOT NULL, created_at REAL NOT NULL)"
                )
                db.commit()

    @contextlib.contextmanager
    def _connect(self, what: str) -> Iterator[sqlite_utils.Database]:
        """A short-lived connection; SQLite errors become `LLMCacheError` naming the file."""
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s)
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a power cut may drop the last entries
            db = sqlite_utils.Database(conn, execute_plugins=False)
            try:
                yield db
            finally:
                db.rollback()  # no-op after a commit; drops a transaction an error left open
        except (sqlite3.DatabaseError, OSError) as exc:
            raise self._error(what, exc) from exc
        finally:
            if conn is not None:
                conn.close()

    def get(self, key: str) -> ChatResponse | None:
        """The stored response for `key` (as recorded: original tokens and latency), or None."""
        with self._connect("cannot be read") as db:
            row = db.execute(f"SELECT response FROM {_TABLE} WHERE key = ?", [key]).fetchone()
        if row is None:
            return None
        try:
            return ChatResponse.from_dict(json.loads(row[0]))
        except (ValueError, TypeError) as exc:
            raise self._error(f"holds a malformed entry for key {key[:12]}", exc) from exc

    def put(self, key: str, request: dict[str, Any], response: ChatResponse) -> None:
        """Store (or overwrite) one entry in a single transaction."""
        record = {
            "key": key,
            "model": str(request.get("model", "")),
            "request": canonical_json(request),
            "response": json.dumps(response.to_dict(), ensure_ascii=False),
            "created_at": time.time(),
        }
        with self._connect("cannot be written") as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                f"INSERT OR REPLACE INTO {_TABLE} (key, model, request, response, created_at)"
                " VALUES (:key, :model, :request, :response, :created_at)",
                record,
            )
            db.commit()

    def __len__(self) -> int:
        with self._connect("cannot be read") as db:
            return int(db.execute(f"SELECT count(*) FROM {_TABLE}").fetchone()[0])

    def clear(self) -> None:
        with self._connect("cannot be written") as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"DELETE FROM {_TABLE}")
            db.commit()

    def _error(self, what: str, exc: BaseException) -> LLMCacheError:
        return LLMCacheError(
            f"LLM response cache {self.path} {what}: {exc}. If the file is corrupt, delete it "
            "(it only holds cached responses) or set VADAR_LLM_CACHE=false to run without it."
        )
