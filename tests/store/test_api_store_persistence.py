"""The database file: creation, WAL, migrations, bad files, transactions, concurrent use."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from sqlite_utils import Database

from api_store import MIGRATIONS, ApiStore, StoreError, apply_migrations
from api_store.connection import open_database


def test_opening_creates_missing_parent_directories_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "lib.sqlite"
    with ApiStore(path) as store:
        assert store.path == path
        assert store.db.journal_mode == "wal"
        assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        store.propose("_f", "() -> int", "Doc.")
    assert path.is_file()
    with ApiStore(path) as store:
        assert store.current("_f").docstring == "Doc."


def test_memory_store_is_fully_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for store in (ApiStore.memory(), ApiStore(":memory:")):
        with store:
            assert store.path is None
            assert {"functions", "function_versions", "programs"} <= set(store.db.table_names())
    assert list(tmp_path.iterdir()) == []  # no file called ":memory:"


def test_migrations_are_recorded_once_and_reopen_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite"
    with ApiStore(path) as store:
        first = store.migrations()
    assert [name for name, _ in first] == [name for name, _ in MIGRATIONS]
    assert all(applied_at for _, applied_at in first)
    with ApiStore(path) as store:
        assert store.migrations() == first  # nothing re-applied, timestamps unchanged
        assert store.db.conn.total_changes == 0  # an up-to-date file is opened without writes


def test_appended_migrations_run_once_in_order(tmp_path: Path) -> None:
    calls: list[str] = []

    def add_notes(db: Database) -> None:
        calls.append("notes")
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")

    def add_column(db: Database) -> None:
        calls.append("column")
        db.execute("ALTER TABLE notes ADD COLUMN author TEXT")

    db = open_database(tmp_path / "lib.sqlite")
    assert apply_migrations(db, MIGRATIONS) == [name for name, _ in MIGRATIONS]
    extended = [*MIGRATIONS, ("0090_notes", add_notes), ("0091_note_author", add_column)]
    assert apply_migrations(db, extended) == ["0090_notes", "0091_note_author"]
    assert apply_migrations(db, extended) == []
    assert calls == ["notes", "column"]
    assert "author" in db["notes"].columns_dict


def test_a_failing_migration_leaves_no_trace(tmp_path: Path) -> None:
    def half_done(db: Database) -> None:
        db.execute("CREATE TABLE partial (id INTEGER)")
        raise RuntimeError("crash in the middle")

    db = open_database(tmp_path / "lib.sqlite")
    with pytest.raises(RuntimeError):
        apply_migrations(db, [*MIGRATIONS, ("0090_broken", half_done)])
    assert "partial" not in db.table_names()
    assert [r["name"] for r in db.query("SELECT name FROM schema_migrations")] == [n for n, _ in MIGRATIONS]


def test_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    db = open_database(tmp_path / "lib.sqlite")
    apply_migrations(db, [*MIGRATIONS, ("0099_future", lambda db: None)])
    db.close()
    with pytest.raises(StoreError, match="0099_future"):
        ApiStore(tmp_path / "lib.sqlite")


def test_a_file_that_is_not_sqlite_gives_a_store_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are not the bytes of a database\n" * 50)
    with pytest.raises(StoreError, match="notes.sqlite") as info:
        ApiStore(path)
    assert "not a usable SQLite database" in str(info.value)


def test_a_directory_or_missing_file_with_create_false_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="directory"):
        ApiStore(tmp_path)
    with pytest.raises(StoreError, match="no library database"):
        ApiStore(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()


def test_a_failed_transaction_writes_nothing(tmp_path: Path) -> None:
    with ApiStore(tmp_path / "lib.sqlite") as store:
        run = store.start_run("eval")
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.propose("_a", "() -> int", "A.")
                store.implement("_a", "def _a(): return 1")
                store.record_program(run.id, "q1", code="x", answer=1)
                raise RuntimeError("crash before the batch was complete")
        assert "_a" not in store
        assert store.programs(run.id) == []
        assert store.db.execute("SELECT count(*) FROM function_versions").fetchone()[0] == 0
        assert not store.db.conn.in_transaction


def test_a_failing_step_inside_one_call_rolls_back_the_whole_call() -> None:
    with ApiStore.memory() as store:
        store.propose("_a", "() -> int", "A.")
        # implement() writes the new version, then its dependencies; the unknown one fails.
        with pytest.raises(StoreError):
            store.implement("_a", "def _a(): return _zz()", dependencies=["_zz"])
        assert [h.version for h in store.history("_a")] == [1]
        assert store.current("_a").version == 1


def test_nested_transactions_roll_back_only_the_inner_block() -> None:
    with ApiStore.memory() as store:
        with store.transaction():
            store.propose("_a", "() -> int", "A.")
            with pytest.raises(ValueError):
                with store.transaction():
                    store.propose("_b", "() -> int", "B.")
                    raise ValueError("inner")
        assert "_a" in store and "_b" not in store


def test_two_connections_see_each_others_writes(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite"
    with ApiStore(path) as writer, ApiStore(path) as reader:
        writer.propose("_a", "() -> int", "A.")
        assert reader.current("_a").status == "proposed"
        raw = sqlite3.connect(path)
        assert raw.execute("SELECT name FROM functions").fetchall() == [("_a",)]
        raw.close()


def test_one_store_can_be_shared_by_threads() -> None:
    with ApiStore.memory() as store:
        run = store.start_run("eval")
        errors: list[BaseException] = []

        def answer(start: int) -> None:
            try:
                for i in range(start, start + 20):
                    store.record_program(run.id, f"q{i}", code="x", answer=i)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=answer, args=(k * 20,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(store.answered_question_ids(run.id)) == 80
