"""Runs, batches and the programs written for each question: the provenance side of the store.

Programs are keyed by `(run_id, question_id)` and written with an upsert, so a resumed run that
answers a question again replaces its row instead of adding a second one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from api_store.answers import encode_answer
from api_store.base import StoreBase
from api_store.connection import utc_now
from api_store.errors import StoreError
from api_store.records import BatchRecord, ProgramRecord, RunRecord, RunStatus


def _config_json(config: Mapping[str, Any] | None) -> str:
    try:
        # `default=str` keeps paths and enums readable; NaN is refused because SQLite's
        # json_valid() (a CHECK on the column) would reject it anyway.
        return json.dumps(dict(config or {}), default=str, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"run config is not JSON-serialisable: {exc}") from exc


class RunsMixin(StoreBase):
    """Methods of `ApiStore` that concern runs, batches and programs."""

    # ----------------------------------------------------------------- runs

    def start_run(
        self, kind: str, *, model: str | None = None, config: Mapping[str, Any] | None = None
    ) -> RunRecord:
        """Open a run (status `running`); `config` is stored as JSON for reproducibility."""
        with self.transaction():
            run_id = self._insert(
                "runs",
                {
                    "kind": kind,
                    "status": RunStatus.RUNNING.value,
                    "model": model,
                    "config": _config_json(config),
                    "started_at": utc_now(),
                    "finished_at": None,
                },
            )
            return self.run(run_id)

    def finish_run(self, run_id: int, status: RunStatus | str = RunStatus.FINISHED) -> RunRecord:
        """Close a run with its final status (`finished`, `interrupted` or `failed`) and the time it ended."""
        status = RunStatus(status)
        if status == RunStatus.RUNNING:
            raise ValueError("finish_run needs a final status, not 'running'")
        with self.transaction():
            self.run(run_id)
            self._db.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?",
                [status.value, utc_now(), run_id],
            )
            return self.run(run_id)

    def reopen_run(self, run_id: int) -> RunRecord:
        """Set an ended (or killed) run back to `running`, to resume it where it stopped."""
        with self.transaction():
            self.run(run_id)
            self._db.execute("UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?",
                             [RunStatus.RUNNING.value, run_id])
            return self.run(run_id)

    def run(self, run_id: int) -> RunRecord:
        """One run; `StoreError` if there is no such run."""
        with self._snapshot():
            row = self._row("SELECT * FROM runs WHERE id = ?", [run_id])
        if row is None:
            raise StoreError(f"no run with id {run_id}")
        return RunRecord.from_row(row)

    def runs(self, kind: str | None = None) -> list[RunRecord]:
        """All runs (optionally of one kind), oldest first."""
        with self._snapshot():
            if kind is None:
                rows = self._rows("SELECT * FROM runs ORDER BY id")
            else:
                rows = self._rows("SELECT * FROM runs WHERE kind = ? ORDER BY id", [kind])
        return [RunRecord.from_row(r) for r in rows]

    # ----------------------------------------------------------------- batches

    def start_batch(
        self, run_id: int, question_ids: Iterable[str], *, index: int | None = None
    ) -> BatchRecord:
        """Record a batch of questions; `index` defaults to the run's next batch index.

        Re-recording an existing `(run_id, index)` with the same questions returns the stored
        batch (resume-safe); with different questions it is an error.
        """
        ids = [str(q) for q in question_ids]
        with self.transaction():
            self.run(run_id)
            if index is None:
                last = self._row("SELECT max(idx) AS idx FROM batches WHERE run_id = ?", [run_id])
                index = 0 if last is None or last["idx"] is None else last["idx"] + 1
            existing = self._row(
                "SELECT * FROM batches WHERE run_id = ? AND idx = ?", [run_id, index]
            )
            if existing is not None:
                batch = BatchRecord.from_row(existing)
                if batch.question_ids != ids:
                    raise StoreError(
                        f"batch {index} of run {run_id} already holds other questions "
                        f"({batch.question_ids})"
                    )
                return batch
            batch_id = self._insert(
                "batches",
                {
                    "run_id": run_id,
                    "idx": index,
                    "question_ids": json.dumps(ids),
                    "created_at": utc_now(),
                },
            )
            row = self._row("SELECT * FROM batches WHERE id = ?", [batch_id])
            assert row is not None
            return BatchRecord.from_row(row)

    def record_proposals(
        self, batch_id: int, accepted: Iterable[Mapping[str, Any]], rejected: Iterable[str] = (),
        queued: Iterable[Mapping[str, Any]] = (),
    ) -> BatchRecord:
        """Keep what the Signature agent proposed for a batch, before any of it is implemented.

        A resumed batch implements exactly these instead of asking again, so an interruption
        neither changes the batch's functions nor adds to them. `queued`: proposals past the
        batch's cap, waiting for the next batch (kept under "queued" when there are any).
        Recorded once: a second call for the same batch is an error.
        """
        data: dict[str, Any] = {"accepted": [dict(stub) for stub in accepted], "rejected": list(rejected)}
        waiting = [dict(entry) for entry in queued]
        if waiting:
            data["queued"] = waiting
        with self.transaction():
            row = self._row("SELECT proposals FROM batches WHERE id = ?", [batch_id])
            if row is None:
                raise StoreError(f"no batch with id {batch_id}")
            if row["proposals"] is not None:
                raise StoreError(f"batch {batch_id} already has its proposals recorded")
            self._db.execute("UPDATE batches SET proposals = ? WHERE id = ?",
                             [json.dumps(data, sort_keys=True), batch_id])
            found = self._row("SELECT * FROM batches WHERE id = ?", [batch_id])
            assert found is not None
            return BatchRecord.from_row(found)

    def batches(self, run_id: int) -> list[BatchRecord]:
        """The run's batches in index order."""
        with self._snapshot():
            rows = self._rows("SELECT * FROM batches WHERE run_id = ? ORDER BY idx", [run_id])
        return [BatchRecord.from_row(r) for r in rows]

    # ----------------------------------------------------------------- programs

    def record_program(
        self,
        run_id: int,
        question_id: str,
        *,
        code: str | None,
        answer: Any = None,
        error: str | None = None,
        attempts: int = 1,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_s: float | None = None,
        correct: bool | None = None,
        batch_id: int | None = None,
    ) -> ProgramRecord:
        """Store (or replace) the program for `question_id` in `run_id`.

        `answer` is kept as JSON, so `True`, `2` and `2.0` come back as `bool`, `int`, `float`.
        """
        now = utc_now()
        values = {
            "run_id": run_id,
            "question_id": str(question_id),
            "batch_id": batch_id,
            "code": code,
            "answer": encode_answer(answer),
            "error": error,
            "attempts": attempts,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "latency_s": latency_s,
            "correct": None if correct is None else int(correct),
            "created_at": now,
            "updated_at": now,
        }
        columns = ", ".join(values)
        marks = ", ".join(f":{c}" for c in values)
        key_and_birth = ("run_id", "question_id", "created_at")
        updates = ", ".join(f"{c} = excluded.{c}" for c in values if c not in key_and_birth)
        with self.transaction():
            self.run(run_id)
            self._db.execute(
                f"INSERT INTO programs ({columns}) VALUES ({marks}) "
                f"ON CONFLICT (run_id, question_id) DO UPDATE SET {updates}",
                values,
            )
            found = self.program(run_id, question_id)
            assert found is not None
            return found

    def program(self, run_id: int, question_id: str) -> ProgramRecord | None:
        """The stored program for one question of one run, if any."""
        with self._snapshot():
            row = self._row(
                "SELECT * FROM programs WHERE run_id = ? AND question_id = ?",
                [run_id, str(question_id)],
            )
        return None if row is None else ProgramRecord.from_row(row)

    def programs(self, run_id: int) -> list[ProgramRecord]:
        """All programs of a run, in the order their questions were first recorded."""
        with self._snapshot():
            rows = self._rows("SELECT * FROM programs WHERE run_id = ? ORDER BY rowid", [run_id])
        return [ProgramRecord.from_row(r) for r in rows]

    def answered_question_ids(self, run_id: int, *, include_errors: bool = True) -> set[str]:
        """Questions a resumed run can skip: those with a stored program.

        With `include_errors=False`, questions whose program ended in an error are left out,
        so a resume retries them.
        """
        sql = "SELECT question_id FROM programs WHERE run_id = ?"
        if not include_errors:
            sql += " AND error IS NULL"
        with self._snapshot():
            return {r["question_id"] for r in self._rows(sql, [run_id])}
