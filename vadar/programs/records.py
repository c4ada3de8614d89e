"""What reasoning techniques record about one answer: one typed record per technique.

Each technique (vote, formalize, revise, unit tests, size priors, build tries) defines its own
record, a dataclass with a `key` (its key under `techniques` in results.jsonl) and `to_json()`.
An answer carries them in `TechniqueRecords`, read back by type: `records.get(VoteRecord)`.
Reading them from results.jsonl, in today's form or the one before the records, is
`vadar.agents.techniques.records`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, Protocol, TypeVar


class TechniqueRecord(Protocol):
    """What one technique did for one answer."""

    key: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values, stored under `key`."""
        ...


R = TypeVar("R")


class TechniqueRecords:
    """The records of the techniques that ran for one answer, at most one of each kind, in the
    order they were first put."""

    def __init__(self, records: Iterable[Any] = ()) -> None:
        self._by_kind: dict[type, Any] = {}
        for record in records:
            self.put(record)

    def get(self, kind: type[R]) -> R | None:
        """The record of `kind`, or None when that technique recorded nothing."""
        return self._by_kind.get(kind)

    def put(self, record: Any) -> None:
        """Record `record`, replacing an earlier record of its kind."""
        self._by_kind[type(record)] = record

    def without(self, kind: type) -> TechniqueRecords:
        """These records but the one of `kind`."""
        return TechniqueRecords(record for record in self if not isinstance(record, kind))

    def copy(self) -> TechniqueRecords:
        return TechniqueRecords(self)

    def to_json(self) -> dict[str, Any]:
        """Each record under its own key."""
        return {record.key: record.to_json() for record in self}

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._by_kind.values()))

    def __len__(self) -> int:
        return len(self._by_kind)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TechniqueRecords) and self._by_kind == other._by_kind

    def __repr__(self) -> str:
        return f"TechniqueRecords({list(self)!r})"
