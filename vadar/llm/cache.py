"""Persistent SQLite cache of chat responses, keyed by the sha256 of the canonical request.

Re-running an experiment then costs nothing and gives identical answers. The file uses WAL so several
processes can share it; each entry is written in one transaction, so readers never see half of one.

Entries have a state. A client stores a new reply as `pending` and marks it `accepted` once the
caller has gone on without failing (its next call, or the end of a `with` block); `get` replays
accepted entries only. A reply after which the process crashed or the run was aborted therefore
stays pending and is asked for again on the rerun, instead of being replayed into the same failure.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import sqlite_utils

from vadar.llm.chat import ChatResponse, canonical_json
from vadar.llm.errors import LLMCacheError

log = logging.getLogger(__name__)
_TABLE = "responses"
ACCEPTED, PENDING = "accepted", "pending"


class ResponseCache:
    """Maps request keys to stored `ChatResponse`s in one SQLite file.

    Each operation opens and closes its own connection: an LLM call takes seconds, a connection
    microseconds, and no connection is ever held open across a `fork()` (SQLite forbids that, and a
    forked worker pool writing through an inherited one silently loses entries).
    """

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self._warned = threading.Event()  # `written` warns once per cache
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
                    " response TEXT NOT NULL, created_at REAL NOT NULL,"
                    f" state TEXT NOT NULL DEFAULT '{ACCEPTED}')"
                )
                db.commit()
            elif "state" not in db[_TABLE].columns_dict:  # a cache written before entries had a state
                db.execute("BEGIN IMMEDIATE")
                if "state" not in db[_TABLE].columns_dict:
                    db.execute(f"ALTER TABLE {_TABLE} ADD COLUMN state TEXT NOT NULL DEFAULT '{ACCEPTED}'")
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

    def written(self, write: Callable[..., None], *args: Any, **kwargs: Any) -> bool:
        """Whether `write(*args, **kwargs)` (`put`, `accept`, `discard`) succeeded.

        A cache that cannot be written (a full disk, a read-only file) does not end a run: the
        reply is still used, only not cached, and one warning line says so.
        """
        try:
            write(*args, **kwargs)
        except LLMCacheError as exc:
            if not self._warned.is_set():
                self._warned.set()
                log.warning("warning: %s -- replies that cannot be cached are still used", exc)
            return False
        return True

    def get(self, key: str) -> ChatResponse | None:
        """The accepted response for `key` (as recorded: original tokens and latency), or None."""
        with self._connect("cannot be read") as db:
            row = db.execute(
                f"SELECT response FROM {_TABLE} WHERE key = ? AND state = ?", [key, ACCEPTED]
            ).fetchone()
        if row is None:
            return None
        try:
            return ChatResponse.from_dict(json.loads(row[0]))
        except (ValueError, TypeError) as exc:
            raise self._error(f"holds a malformed entry for key {key[:12]}", exc) from exc

    def put(self, key: str, request: dict[str, Any], response: ChatResponse, *, pending: bool = False) -> None:
        """Store (or overwrite) one entry in a single transaction; `pending` ones are not replayed yet."""
        record = {
            "key": key,
            "model": str(request.get("model", "")),
            "request": canonical_json(request),
            "response": json.dumps(response.to_dict()),  # ASCII escapes: any text survives
            "created_at": time.time(),
            "state": PENDING if pending else ACCEPTED,
        }
        with self._connect("cannot be written") as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                f"INSERT OR REPLACE INTO {_TABLE} (key, model, request, response, created_at, state)"
                " VALUES (:key, :model, :request, :response, :created_at, :state)",
                record,
            )
            db.commit()

    def accept(self, keys: list[str]) -> None:
        """Mark pending entries as accepted: the caller went on using these replies."""
        self._set_pending(keys, "UPDATE {table} SET state = '" + ACCEPTED + "'")

    def discard(self, keys: list[str]) -> None:
        """Delete pending entries: the run failed after these replies, so ask again next time."""
        self._set_pending(keys, "DELETE FROM {table}")

    def _set_pending(self, keys: list[str], statement: str) -> None:
        if not keys:
            return
        marks = ", ".join("?" for _ in keys)
        sql = statement.format(table=_TABLE) + f" WHERE state = '{PENDING}' AND key IN ({marks})"
        with self._connect("cannot be written") as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(sql, list(keys))
            db.commit()

    def state(self, key: str) -> str | None:
        """`accepted`, `pending`, or None when there is no entry."""
        with self._connect("cannot be read") as db:
            row = db.execute(f"SELECT state FROM {_TABLE} WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def __len__(self) -> int:
        with self._connect("cannot be read") as db:
            return int(db.execute(f"SELECT count(*) FROM {_TABLE}").fetchone()[0])

    def clear(self) -> None:
        with self._connect("cannot be written") as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"DELETE FROM {_TABLE}")
            db.commit()

    def _error(self, what: str, exc: BaseException) -> LLMCacheError:
        cause = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
        text = cause.lower()
        if "full" in text or "no space" in text:
            hint = "free some space; the replies already cached are kept"
        elif "readonly" in text or "read-only" in text or "permission" in text:
            hint = "make it writable, or set VADAR_LLM_CACHE=false to run without it"
        else:
            hint = ("if the file is corrupt, delete it (it only holds cached responses) or set "
                    "VADAR_LLM_CACHE=false to run without it")
        return LLMCacheError(f"LLM response cache {self.path} {what}: {cause}; {hint}")
