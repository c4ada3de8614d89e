"""Proposals that wait: what a batch's cap (`agents.max_new_functions`) cut is implemented first in
the next batch, not lost.

A CLEVR build's first batch proposed twelve helpers with checkable claims; the five that fit the
cap were implemented and the seven others (front, behind, same shape, material, size) were
dropped, and never came back. Now each batch records, beside what it implements, the queue it
leaves (`ApiStore.record_proposals`, under "queued", each stub with the batch that proposed it):
the next batch of the same build run takes its stubs first and asks the Signature agent only for
the places left. The queue lives in the batches' stored proposals, so a build resumed after an
interruption reads the same queue; a new build run starts with none.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from api_store import ApiStore, BatchRecord
from vadar.programs.stubs import Stub


@dataclass(frozen=True)
class QueuedStub:
    """A proposal past a batch's cap, and the index of the batch that proposed it."""

    stub: Stub
    batch: int

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self.stub), "batch": self.batch}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QueuedStub:
        return cls(Stub(data["name"], data["signature"], data["docstring"]), int(data["batch"]))


@dataclass(frozen=True)
class RecordedProposals:
    """A batch's stored proposals, typed: what it implements, what it refused and why, what waits."""

    accepted: tuple[Stub, ...]
    rejected: tuple[str, ...]
    queued: tuple[QueuedStub, ...]

    @classmethod
    def of(cls, record: BatchRecord) -> RecordedProposals:
        data = record.proposals or {}
        return cls(tuple(Stub(**fields) for fields in data.get("accepted", [])), tuple(data.get("rejected", [])),
                   tuple(QueuedStub.from_dict(entry) for entry in data.get("queued", [])))


def waiting_before(store: ApiStore, run_id: int, index: int) -> list[QueuedStub]:
    """The queue the latest earlier batch of the build run left (its proposals recorded)."""
    earlier = [b for b in store.batches(run_id) if b.index < index and b.proposals is not None]
    return list(RecordedProposals.of(earlier[-1]).queued) if earlier else []
