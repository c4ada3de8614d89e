"""Persistent SQLite cache of chat responses, keyed by the sha256 of the canonical request.

Re-running an experiment then costs nothing and gives identical answers. The file uses WAL so several
processes can share it; each entry is written in one transaction, so readers never see half of one.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import sqlite_utils

from vadar.llm.chat import ChatResponse, canonical_json
from vadar.llm.errors import LLMCacheError

_TABLE = "responses"


class ResponseCache:
    """Maps request keys to stored `ChatResponse`s in one SQLite file."""

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), timeout=busy_timeout_s, check_same_thread=False)
            self._db = sqlite_utils.Database(conn, execute_plugins=False)
            self._db.enable_wal()
            if _TABLE not in self._db.table_names():
                with self._db.atomic():
                    self._db.execute(
                        f"CREATE TABLE IF NOT EXISTS {_TABLE} ("
                        " key TEXT PRIMARY KEY, model TEXT, request TEXT NOT NULL,"
                        " response TEXT NOT NULL, created_at REAL NOT NULL)"
                    )
        except (sqlite3.DatabaseError, OSError) as exc:
            raise self._error("cannot open", exc) from exc

    def get(self, key: str) -> ChatResponse | None:
        """The stored response for `key` (as recorded: original tokens and latency), or None."""
        try:
            with self._lock:
                row = self._db.execute(f"SELECT response FROM {_TABLE} WHERE key = ?", [key]).fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._error("cannot read", exc) from exc
        if row is None:
            return None
        try:
            return ChatResponse.from_dict(json.loads(row[0]))
        except (ValueError, TypeError) as exc:
            raise self._error(f"holds a malformed entry for key {key[:12]}", exc) from exc

    def put(self, key: str, request: dict[str, Any], response: ChatResponse) -> None:
        """Store (or overwrite) one entry atomically."""
        record = {
            "key": key,
            "model": str(request.get("model", "")),
            "request": canonical_json(request),
            "response": json.dumps(response.to_dict(), ensure_ascii=False),
            "created_at": time.time(),
        }
        try:
            with self._lock, self._db.atomic():
                self._db.execute(
                    f"INSERT OR REPLACE INTO {_TABLE} (key, model, request, response, created_at)"
                    " VALUES (:key, :model, :request, :response, :created_at)",
                    record,
                )
        except sqlite3.DatabaseError as exc:
            raise self._error("cannot write", exc) from exc

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute(f"SELECT count(*) FROM {_TABLE}").fetchone()[0])

    def clear(self) -> None:
        with self._lock, self._db.atomic():
            self._db.execute(f"DELETE FROM {_TABLE}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _error(self, what: str, exc: BaseException) -> LLMCacheError:
        return LLMCacheError(
            f"LLM response cache {self.path} {what}: {exc}. If the file is corrupt, delete it "
            "(it only holds cached responses) or set VADAR_LLM_CACHE=false to run without it."
        )
