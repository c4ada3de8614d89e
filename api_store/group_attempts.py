"""Group helper requests that were refused: what a build remembers of its distillation's group route.

The group route asks the LLM for one helper per group of similar right programs. A group refused
in one batch comes back in the next a question or two larger, so its prompt differs and a response
cache does not answer it: without a record, every batch pays again for the same refusal.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from api_store.base import StoreBase
from api_store.connection import utc_now


@dataclass(frozen=True)
class GroupAttempt:
    """One refused group request: the questions it was written for and why its helper was refused."""

    id: int
    batch_id: int | None
    frame: str
    question_ids: tuple[str, ...]
    name: str
    reason: str
    created_at: str


class GroupAttemptsMixin(StoreBase):
    """Methods of `ApiStore` for refused group requests."""

    def record_group_attempt(self, *, batch_id: int | None, frame: str, question_ids: Iterable[str],
                             name: str, reason: str) -> int:
        """Keep a refused group request, so a later batch need not ask for the same group again."""
        with self.transaction():
            return self._insert("group_attempts", {
                "batch_id": batch_id, "frame": frame, "question_ids": json.dumps([str(q) for q in question_ids]),
                "name": name, "reason": reason, "created_at": utc_now()})

    def group_attempts(self) -> list[GroupAttempt]:
        with self._snapshot():
            rows = self._rows("SELECT * FROM group_attempts ORDER BY id")
        return [GroupAttempt(r["id"], r["batch_id"], r["frame"], tuple(json.loads(r["question_ids"])), r["name"],
                             r["reason"], r["created_at"]) for r in rows]
