"""A helper's life is its version's status: proposed -> candidate -> admitted -> retired, or failed."""

from __future__ import annotations

import json

import pytest

from api_store import MIGRATIONS, ApiStore, FunctionStatus, StoreError, apply_migrations
from api_store.connection import open_database


def _candidate(store: ApiStore, name: str, code: str | None = None, dependencies: tuple[str, ...] = ()) -> None:
    store.propose(name, "(a) -> int", f"Doc of {name}.")
    store.implement(name, code or f"def {name}(a):\n    return 1\n", dependencies=list(dependencies))


def test_an_implementation_is_a_candidate_and_the_library_is_what_the_gate_admitted():
    with ApiStore.memory() as store:
        _candidate(store, "_a")
        _candidate(store, "_b")
        assert store.current("_a").status is FunctionStatus.CANDIDATE
        assert store.library() == [] and [f.name for f in store.candidates()] == ["_a", "_b"]
        store.mark_admitted("_a")
        assert [f.name for f in store.library()] == ["_a"]
        assert [f.name for f in store.library(with_candidates=True)] == ["_a", "_b"]
        assert [f.name for f in store.candidates()] == ["_b"]


def test_only_a_candidate_is_admitted_and_a_retired_helper_may_come_back_as_a_new_version():
    with ApiStore.memory() as store:
        store.propose("_a", "(a) -> int", "Doc.")
        with pytest.raises(StoreError, match="only a candidate"):
            store.mark_admitted("_a")
        store.implement("_a", "def _a(a):\n    return 1\n")
        store.mark_admitted("_a")
        retired = store.mark_retired("_a", "programs using it were right 0 of 4 times")
        assert (retired.status, retired.last_error) == (FunctionStatus.RETIRED, "programs using it were right 0 of 4 times")
        assert store.library() == [] and store.functions() == []
        assert [f.name for f in store.functions(include_failed=True)] == ["_a"]
        again = store.propose("_a", "(a) -> int", "Second try.")
        assert again.version == 3 and store.history("_a")[1].superseded and not again.superseded


def test_an_implementation_equal_to_the_admitted_version_keeps_it_admitted():
    with ApiStore.memory() as store:
        _candidate(store, "_a")
        store.mark_admitted("_a")
        assert store.implement("_a", "def _a(a):\n    return 1\n").status is FunctionStatus.ADMITTED
        assert len(store.history("_a")) == 2


def test_older_exports_spell_admitted_as_implemented():
    assert FunctionStatus("implemented") is FunctionStatus.ADMITTED


def _version(db, function_id: int, name: str, status: str, code: str | None) -> int:
    db.execute("INSERT INTO functions (id, name, normalized_name, created_at) VALUES (?, ?, ?, 't')",
               [function_id, name, name.replace("_", "")])
    cursor = db.execute(
        "INSERT INTO function_versions (function_id, version, signature, docstring, code, content_hash, status, "
        "created_at, updated_at) VALUES (?, 1, '(a) -> int', 'Doc.', ?, 'h', ?, 't', 't')",
        [function_id, code, status])
    db.execute("UPDATE functions SET current_version_id = ? WHERE id = ?", [cursor.lastrowid, function_id])
    return cursor.lastrowid


def test_a_home_made_before_the_lifecycle_keeps_its_library(tmp_path):
    db = open_database(tmp_path / "old.sqlite")
    apply_migrations(db, MIGRATIONS[:6])
    code = "def {}(a):\n    return 1\n"
    judged = _version(db, 1, "_judged", "implemented", code.format("_judged"))
    _version(db, 2, "_by_hand", "implemented", code.format("_by_hand"))
    retired = _version(db, 3, "_retired", "failed", code.format("_retired"))
    rejected = _version(db, 4, "_rejected", "failed", code.format("_rejected"))
    _version(db, 5, "_proposed", "proposed", None)
    for version_id, decision in ((judged, "admitted"), (retired, "admitted"), (retired, "evaluated"),
                                 (retired, "retired"), (rejected, "rejected")):
        db.execute("INSERT INTO function_decisions (version_id, decision, mode, evidence, created_at) "
                   "VALUES (?, ?, 'labelled', ?, 't')", [version_id, decision, json.dumps({})])
    db.conn.commit()
    db.close()
    with ApiStore(tmp_path / "old.sqlite") as store:
        states = {f.name: f.status.value for f in store.functions(include_failed=True)}
        assert states == {"_judged": "admitted", "_by_hand": "admitted", "_retired": "retired",
                          "_rejected": "failed", "_proposed": "proposed"}
        assert [f.name for f in store.library()] == ["_judged", "_by_hand"]
        assert store.db.execute("PRAGMA foreign_key_check").fetchone() is None
        store.propose("_new", "(a) -> int", "Doc.")  # the triggers and the view work on the new table
        with pytest.raises(Exception, match="append-only"):
            store.db.execute("DELETE FROM function_versions")
