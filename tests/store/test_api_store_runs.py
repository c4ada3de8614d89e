"""Runs, batches and programs: provenance, resume-safe upserts and typed answers."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from api_store import ApiStore, RunStatus, StoreError, decode_answer, encode_answer


@pytest.fixture
def store() -> ApiStore:
    with ApiStore.memory() as s:
        yield s


def test_runs_keep_kind_model_config_and_status(store: ApiStore) -> None:
    run = store.start_run("eval", model="qwen", config={"split": "val", "home": Path("/x")})
    assert (run.kind, run.model, run.status, run.finished_at) == ("eval", "qwen", RunStatus.RUNNING, None)
    assert run.config == {"split": "val", "home": "/x"}
    done = store.finish_run(run.id)
    assert done.status == RunStatus.FINISHED and done.finished_at >= done.started_at
    other = store.start_run("gold")
    store.finish_run(other.id, "failed")
    assert [r.id for r in store.runs()] == [run.id, other.id]
    assert [r.status for r in store.runs(kind="gold")] == [RunStatus.FAILED]
    with pytest.raises(ValueError):
        store.finish_run(run.id, "running")
    with pytest.raises(StoreError, match="no run with id 999"):
        store.run(999)


def test_batches_are_numbered_per_run_and_resume_safe(store: ApiStore) -> None:
    run = store.start_run("eval")
    b0 = store.start_batch(run.id, ["1", "2"])
    b1 = store.start_batch(run.id, [3, 4])
    assert (b0.index, b1.index, b1.question_ids) == (0, 1, ["3", "4"])
    assert store.start_batch(run.id, ["1", "2"], index=0) == b0  # resumed: same row back
    with pytest.raises(StoreError, match="already holds other questions"):
        store.start_batch(run.id, ["9"], index=0)
    assert [b.index for b in store.batches(run.id)] == [0, 1]
    with pytest.raises(StoreError):
        store.start_batch(12345, ["1"])


def test_record_program_stores_everything(store: ApiStore) -> None:
    run = store.start_run("eval")
    batch = store.start_batch(run.id, ["q1"])
    p = store.record_program(
        run.id, "q1", code="final_result = 3", answer=3, error=None, attempts=2,
        prompt_tokens=800, completion_tokens=120, latency_s=1.25, correct=True, batch_id=batch.id,
    )
    assert (p.run_id, p.question_id, p.code, p.answer, p.attempts) == (run.id, "q1", "final_result = 3", 3, 2)
    assert (p.prompt_tokens, p.completion_tokens, p.latency_s, p.correct) == (800, 120, 1.25, True)
    assert p.batch_id == batch.id
    assert store.program(run.id, "q1") == p
    assert store.program(run.id, "q2") is None


def test_rerecording_a_program_replaces_it_so_resume_never_duplicates(store: ApiStore) -> None:
    run = store.start_run("eval")
    first = store.record_program(run.id, "q1", code="a", error="ZeroDivisionError")
    store.record_program(run.id, "q2", code="b", answer="red")
    again = store.record_program(run.id, "q1", code="c", answer=2.5, correct=False)
    assert [p.question_id for p in store.programs(run.id)] == ["q1", "q2"]
    assert (again.code, again.answer, again.error, again.correct) == ("c", 2.5, None, False)
    assert again.created_at == first.created_at and again.updated_at >= first.updated_at
    count = store.db.execute("SELECT count(*) FROM programs").fetchone()[0]
    assert count == 2


def test_answered_question_ids_drive_resume(store: ApiStore) -> None:
    run = store.start_run("eval")
    other = store.start_run("eval")
    store.record_program(run.id, "1", code="x", answer=1)
    store.record_program(run.id, "2", code="x", error="timeout")
    store.record_program(other.id, "3", code="x", answer=1)
    assert store.answered_question_ids(run.id) == {"1", "2"}
    assert store.answered_question_ids(run.id, include_errors=False) == {"1"}
    assert store.answered_question_ids(other.id) == {"3"}


@pytest.mark.parametrize(
    "answer", [True, False, 0, 1, 2, 2.0, -0.5, "yes", "", [1, 2.0, "a", False], {"k": [1]}, None]
)
def test_answers_round_trip_with_their_types(store: ApiStore, answer: object) -> None:
    run = store.start_run("eval")
    store.record_program(run.id, "q", code="x", answer=answer)
    back = store.program(run.id, "q").answer
    assert back == answer and type(back) is type(answer)


def test_special_answers(store: ApiStore) -> None:
    assert math.isnan(decode_answer(encode_answer(float("nan"))))
    assert decode_answer(encode_answer((1, 2))) == [1, 2]

    class FakeNumpyScalar:  # duck-typed like numpy.float32
        def item(self) -> float:
            return 0.5

    class FakeArray:  # duck-typed like numpy.ndarray
        def tolist(self) -> list[int]:
            return [1, 2]

    assert decode_answer(encode_answer(FakeNumpyScalar())) == 0.5
    assert decode_answer(encode_answer({"a": FakeArray()})) == {"a": [1, 2]}
    run = store.start_run("eval")
    with pytest.raises(StoreError, match="cannot store answer"):
        store.record_program(run.id, "q", code="x", answer=object())
    assert store.programs(run.id) == []


def test_programs_need_an_existing_run(store: ApiStore) -> None:
    with pytest.raises(StoreError, match="no run"):
        store.record_program(42, "q", code="x")


def test_a_store_made_before_run_outcomes_is_migrated_keeping_its_rows(tmp_path) -> None:
    from api_store import MIGRATIONS, RunStatus, apply_migrations
    from api_store.connection import open_database

    db = open_database(tmp_path / "old.sqlite")
    apply_migrations(db, MIGRATIONS[:1])  # the schema as first shipped
    db.execute("INSERT INTO runs (kind, status, config, started_at) VALUES ('build-api', 'running', '{}', 't')")
    db.execute("INSERT INTO batches (run_id, idx, question_ids, created_at) VALUES (1, 0, '[\"q1\"]', 't')")
    db.close()
    with ApiStore(tmp_path / "old.sqlite") as store:
        assert store.batches(1)[0].proposals is None
        assert store.finish_run(1, RunStatus.INTERRUPTED).status == RunStatus.INTERRUPTED
        assert store.reopen_run(1).status == RunStatus.RUNNING and store.run(1).finished_at is None
        batch = store.record_proposals(1, [{"name": "_a", "signature": "(x) -> int", "docstring": "d"}], ["_b: dup"])
        assert batch.proposals == {"accepted": [{"name": "_a", "signature": "(x) -> int", "docstring": "d"}],
                                   "rejected": ["_b: dup"]}
        with pytest.raises(StoreError, match="already"):
            store.record_proposals(1, [])
        assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        with pytest.raises(sqlite3.IntegrityError):  # batches still point at existing runs only
            store.db.execute("INSERT INTO batches (run_id, idx, question_ids, created_at) VALUES (99, 0, '[]', 't')")
