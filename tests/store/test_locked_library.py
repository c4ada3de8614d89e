"""A library another process holds is reported as such, in one line, not as a fault of the file or
its disk: waiting is the remedy, not a backup."""

from __future__ import annotations

import sqlite3

import pytest

import api_store.connection
from api_store import ApiStore, StoreError


@pytest.fixture
def held(tmp_path, monkeypatch):
    """A library whose write lock another connection holds; SQLite waits 0.2 s, not 30."""
    monkeypatch.setattr(api_store.connection, "BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "lib.sqlite"
    with ApiStore(path) as store:
        store.propose("_twice", "(x)", "Twice x.")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    yield path
    other.execute("ROLLBACK")
    other.close()


def test_a_write_to_a_held_library_says_another_process_holds_it(held):
    with ApiStore(held) as store, pytest.raises(StoreError) as info:
        store.propose("_thrice", "(x)", "Thrice x.")
    text = str(info.value)
    assert "database is locked" in text and "another process has held the library for 0.2 s" in text
    assert "check the file and its disk" not in text and "\n" not in text


def test_the_other_failures_keep_their_own_hints():
    from api_store.connection import storage_failure

    full = storage_failure(None, sqlite3.OperationalError("database or disk is full"))
    assert full is not None and "free some space" in str(full) and "another process" not in str(full)
