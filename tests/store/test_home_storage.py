"""Storage failures under the home: the library store and the LLM response cache on a full disk,
a read-only file system, or a file that is not a database are one line naming the file and the
cause; a full cache does not end a run, a full library stops it and the rerun resumes."""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from api_store import ApiStore, FunctionStatus, StoreError
from llm_fake_server import FakeServer, MESSAGES, make_client
from scripted_build import Router
from vadar.cli import app
from vadar.cli.errors import user_errors
from vadar.config import VadarConfig
from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatRequest
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.pipeline import build_api
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

FAILURES = {
    "full": (sqlite3.OperationalError("database or disk is full"),
             "database or disk is full; free some space and rerun the same command to resume"),
    "enospc": (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
               "No space left on device; free some space and rerun the same command to resume"),
    "read-only": (sqlite3.OperationalError("attempt to write a readonly database"),
                  "attempt to write a readonly database; make it writable, or point VADAR_HOME "
                  "(or VADAR_PATHS_DB_PATH) elsewhere"),
    "not-a-database": (sqlite3.DatabaseError("file is not a database"),
                       "file is not a database; restore it from a backup, or move it away to start a new library"),
}
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class FailingConnection:
    """A SQLite connection whose writes fail with `error` while `failing` is set; reads too with `reads`."""

    def __init__(self, conn: sqlite3.Connection, error: BaseException, *, reads: bool = False) -> None:
        self._conn, self.error, self.reads, self.failing = conn, error, reads, True

    def execute(self, sql: str, *args):
        statement = sql.lstrip().upper()
        if self.failing and (statement.startswith(WRITES) or (self.reads and statement.startswith("SELECT"))):
            raise self.error
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self._conn, name)

    def __setattr__(self, name: str, value) -> None:
        if name in ("_conn", "error", "reads", "failing"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._conn, name, value)

    def __enter__(self):
        return self._conn.__enter__()

    def __exit__(self, *exc):
        return self._conn.__exit__(*exc)


def failing(store: ApiStore, error: BaseException, *, reads: bool = False) -> FailingConnection:
    conn = FailingConnection(store.db.conn, error, reads=reads)
    store.db.conn = conn
    return conn


@pytest.mark.parametrize("kind", FAILURES)
def test_a_library_write_that_fails_is_one_line_and_leaves_the_library_as_it_was(tmp_path: Path, kind: str) -> None:
    error, cause = FAILURES[kind]
    path = tmp_path / "home" / "library.sqlite"
    with ApiStore(path) as store:
        store.propose("_kept", "(image: Image) -> int", "Kept.")
        conn = failing(store, error)
        with pytest.raises(StoreError) as info:
            store.propose("_count", "(image: Image, object_prompt: str) -> int", "Count.")
        assert str(info.value) == f"cannot use the library {path}: {cause}"
        conn.failing = False  # space freed: the same store goes on
        assert [f.name for f in store.functions(include_failed=True)] == ["_kept"]
        store.propose("_count", "(image: Image, object_prompt: str) -> int", "Count.")
    with ApiStore(path) as store:
        assert [f.name for f in store.functions(include_failed=True)] == ["_kept", "_count"]


@pytest.mark.parametrize("kind", ["not-a-database", "full"])
def test_a_library_read_that_fails_is_one_line(tmp_path: Path, kind: str) -> None:
    error, cause = FAILURES[kind]
    path = tmp_path / "library.sqlite"
    with ApiStore(path) as store:
        failing(store, error, reads=True)
        with pytest.raises(StoreError, match="^cannot use the library .*library.sqlite: ") as info:
            store.functions()
    assert str(info.value).endswith(cause) and "\n" not in str(info.value)


def test_a_constraint_violation_is_not_taken_for_a_storage_failure(tmp_path: Path) -> None:
    with ApiStore(tmp_path / "library.sqlite") as store:
        failing(store, sqlite3.IntegrityError("UNIQUE constraint failed: functions.name"))
        with pytest.raises(sqlite3.IntegrityError):
            store.propose("_count", "(image: Image) -> int", "Count.")


@pytest.mark.parametrize("kind", ["full", "not-a-database"])
def test_library_commands_show_a_failing_store_in_one_line(tmp_path: Path, monkeypatch, kind: str) -> None:
    error, cause = FAILURES[kind]
    path = tmp_path / "library.sqlite"
    with ApiStore(path) as store:
        store.propose("_count", "(image: Image) -> int", "Count.")
    opened = ApiStore.__init__

    def open_failing(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        failing(self, error, reads=True)

    monkeypatch.setattr(ApiStore, "__init__", open_failing)
    for command in (["library", "list"], ["library", "show", "_count"], ["library", "export"]):
        result = CliRunner().invoke(app, [*command, "--db", str(path)])
        assert result.exit_code == 1, command
        assert result.output.strip().splitlines() == [f"Error: cannot use the library {path}: {cause}"], command


@pytest.fixture
def build_config(tmp_path: Path) -> VadarConfig:
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.library.distill = False
    config.library.admit_min_uses = 1
    config.library.admission = "off"
    config.library.validation = False  # the gate has its own tests
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    config.agents.implementation_attempts = 3
    config.agents.max_new_functions = 2
    return config


@pytest.mark.parametrize("kind", ["full", "enospc"])
def test_a_build_stopped_by_a_full_library_is_one_line_and_resumes(build_config: VadarConfig, tmp_path: Path,
                                                                   kind: str) -> None:
    error, cause = FAILURES[kind]
    data = DataSelection(limit=2).prepare()
    out = tmp_path / "run"
    conns: list[FailingConnection] = []

    class FillsTheDisk(Router):
        def answer(self, role, messages):
            if self.calls == 2:  # after the first implementation attempt, the disk is full
                conns.append(failing(session.store, error))
            return super().answer(role, messages)

    console = Console(record=True, width=400)
    with open_session(build_config, llm=ScriptedLLM([FillsTheDisk()] * 10)) as session:
        with pytest.raises(typer.Exit), user_errors(console):
            build_api(session, data, out, batch_size=2)
        conns[0].failing = False
    assert console.export_text().strip().splitlines() == [
        f"Error: cannot use the library {build_config.paths.database}: {cause}"]

    with open_session(build_config, llm=ScriptedLLM([Router()] * 10)) as session:
        build_api(session, data, out, batch_size=2)
        functions = {f.name: f.status for f in session.store.functions(include_failed=True)}
    assert functions == {"_count": FunctionStatus.FAILED, "_exists": FunctionStatus.ADMITTED}


# -- the LLM response cache ------------------------------------------------------------------------


class FullCache(ResponseCache):
    """A response cache whose writes fail with `error` (reads still work)."""

    error: BaseException = FAILURES["full"][0]

    def _connect(self, what):
        if what == "cannot be written":
            return _raising(self, what, self.error)
        return super()._connect(what)


def _raising(cache: ResponseCache, what: str, error: BaseException):
    import contextlib

    @contextlib.contextmanager
    def failing_connection():
        raise cache._error(what, error)
        yield  # pragma: no cover

    return failing_connection()


@pytest.mark.parametrize("kind, hint", [("full", "free some space; the replies already cached are kept"),
                                        ("enospc", "free some space; the replies already cached are kept"),
                                        ("read-only", "make it writable, or set VADAR_LLM_CACHE=false")])
def test_a_reply_that_cannot_be_cached_is_used_and_said_once(server: FakeServer, tmp_path: Path, caplog,
                                                             kind: str, hint: str) -> None:
    path = tmp_path / "cache.sqlite"
    cache = FullCache(path)
    cache.error = FAILURES[kind][0]
    client = make_client(server.base_url, cache=cache)
    with caplog.at_level(logging.WARNING, logger="vadar.llm.cache"):
        first = client.complete(ChatRequest(MESSAGES))
        second = client.tagged("other").complete(ChatRequest([*MESSAGES, {"role": "user", "content": "again"}]))
        client.accept_pending()
    assert first.text and second.text and server.hits == 2 and len(ResponseCache(path)) == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert warnings[0].startswith(f"warning: LLM response cache {path} cannot be written: ")
    assert hint in warnings[0] and warnings[0].endswith("replies that cannot be cached are still used")


def test_a_cache_that_is_not_a_database_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    console = Console(record=True, width=400)
    with pytest.raises(typer.Exit), user_errors(console):
        ResponseCache(path)
    [line] = console.export_text().strip().splitlines()
    assert line.startswith(f"Error: LLM response cache {path} cannot open: file is not a database; ")
    assert "delete it" in line
