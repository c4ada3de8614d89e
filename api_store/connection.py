"""Opening the SQLite file and running transactions on it.

The connection is opened in driver autocommit mode (`isolation_level=None`) so that the only
transactions are the explicit ones started here: `BEGIN IMMEDIATE` at the outermost level takes
the write lock up front (in WAL mode a deferred transaction that later writes can fail with
SQLITE_BUSY without waiting), and nested blocks become savepoints, so a failure anywhere inside
rolls back everything the block wrote.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from sqlite_utils import Database

from api_store.errors import StoreError

BUSY_TIMEOUT_S = 30.0


def utc_now() -> str:
    """ISO-8601 UTC timestamp with microseconds; sorts lexically in time order."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def open_database(path: Path | None, *, create: bool = True) -> Database:
    """Open (or create) the store at `path`, or an in-memory one for `None`, ready for use.

    File databases get WAL journaling, so readers (e.g. `vadar library list`) never block a run
    that is writing. Anything SQLite cannot open becomes a `StoreError` naming the path.
    """
    if path is None:
        return _configure(sqlite3.connect(":memory:", check_same_thread=False), None)
    path = Path(path).expanduser()
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a SQLite database file")
    if not path.exists():
        if not create:
            raise StoreError(f"no library database at {path}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the directory for {path}: {exc}") from exc
    elif _is_empty(path):
        raise StoreError(
            f"{path} is empty (0 bytes), so it holds no library: a copy or a write was cut short "
            "(a full disk?). Restore it from a backup, or delete it to start a new library."
        )
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {unusable_reason(path, exc)}") from exc
    return _configure(conn, path)


def _is_empty(path: Path) -> bool:
    """A 0-byte file whose write-ahead log holds nothing either: not a database SQLite wrote."""
    try:
        if path.stat().st_size:
            return False
        wal = path.with_name(path.name + "-wal")
        return not (wal.exists() and wal.stat().st_size)
    except OSError:
        return False


def locked_hint(cause: str) -> str | None:
    """What to do about a library another process holds (`database is locked`), or None when the
    failure is something else: the file and its disk are fine, and waiting is the remedy."""
    text = cause.lower()
    if "locked" not in text and "busy" not in text:
        return None
    return (f"another process has held the library for {BUSY_TIMEOUT_S:g} s (a build, an evaluation or a "
            "`vadar library` command on the same home?); wait for it to finish, or point VADAR_HOME elsewhere")


def unusable_reason(path: Path, exc: BaseException) -> str:
    """Why SQLite failed on `path`, naming a read-only file or directory, or another process holding
    the file, when that is the cause."""
    locked = locked_hint(str(exc))
    if locked is not None:
        return f"{exc}: {locked}"
    folder = path.parent
    if path.exists() and not os.access(path, os.W_OK):
        return f"the file is read-only ({exc}); make it writable, or point VADAR_HOME elsewhere"
    if not os.access(folder, os.W_OK):
        return (f"the directory {folder} is read-only ({exc}); SQLite must create {path.name}-wal and "
                f"{path.name}-shm next to the database. Make it writable, or set VADAR_HOME "
                "(or VADAR_PATHS_DB_PATH) to a writable place")
    if "readonly" in str(exc) or "read-only" in str(exc):
        return f"{exc}; check that the file and its directory are writable (and the disk is not full)"
    return str(exc)


def storage_failure(path: Path | None, exc: BaseException) -> StoreError | None:
    """A `StoreError` naming `path` for a failure of the file or the disk under the library, or
    `None` for anything else (a constraint or a bug keeps its traceback).

    A full disk (`database or disk is full`, `ENOSPC`), a read-only file system and a file that is
    not (or no longer) a database all reach the user as this one line; every write is one
    transaction, so a run stopped this way resumes from the last one that committed.
    """
    where = ":memory:" if path is None else str(path)
    if isinstance(exc, OSError):
        cause = exc.strerror or str(exc) or type(exc).__name__
    elif isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError:
        cause = str(exc)
    else:
        return None
    text = cause.lower()
    if (locked := locked_hint(cause)) is not None:
        hint = locked
    elif "full" in text or "no space" in text:
        hint = "free some space and rerun the same command to resume"
    elif "readonly" in text or "read-only" in text or "permission" in text:
        hint = "make it writable, or point VADAR_HOME (or VADAR_PATHS_DB_PATH) elsewhere"
    elif "not a database" in text or "malformed" in text:
        hint = "restore it from a backup, or move it away to start a new library"
    else:
        hint = "check the file and its disk"
    return StoreError(f"cannot use the library {where}: {cause}; {hint}")


def _configure(conn: sqlite3.Connection, path: Path | None) -> Database:
    conn.isolation_level = None
    try:
        db = Database(conn, execute_plugins=False)
        # Reading the schema forces SQLite to parse the file header: a non-database fails here.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        conn.execute("PRAGMA foreign_keys = ON")
        if path is not None:
            db.enable_wal()
            conn.execute("PRAGMA synchronous = NORMAL")  # durable enough with WAL, much faster
    except sqlite3.DatabaseError as exc:
        conn.close()
        if path is not None and isinstance(exc, sqlite3.OperationalError):
            raise StoreError(f"cannot use {path}: {unusable_reason(path, exc)}") from exc
        raise StoreError(f"{path} is not a usable SQLite database: {exc}") from exc
    return db


@contextlib.contextmanager
def write_transaction(db: Database) -> Iterator[None]:
    """All-or-nothing block: commit on success, roll back everything on any exception."""
    conn = db.conn
    if conn.in_transaction:
        savepoint = f"api_store_{secrets.token_hex(8)}"
        conn.execute(f"SAVEPOINT {savepoint}")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint}")
                conn.execute(f"RELEASE SAVEPOINT {savepoint}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {savepoint}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def read_snapshot(db: Database) -> Iterator[None]:
    """Several reads that must see one consistent state, even while another process writes."""
    conn = db.conn
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
