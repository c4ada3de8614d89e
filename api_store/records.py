"""Immutable record types returned by `ApiStore`, built from database rows.

Callers never see raw rows: JSON columns are decoded, booleans are `bool`, and the dependency
list of a function version travels with it, so prompt renderers need no second query.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from api_store.answers import decode_answer


class FunctionStatus(StrEnum):
    """A helper's life, stored on each of its versions.

    `proposed` (a stub, no code) -> `candidate` (code that runs: the API agent's implementation,
    or a route's draft on its way to the gate) -> `admitted` (the gate let it in: it is the
    library) -> `retired` (it left the library on later evidence; its history stays). `failed`
    is a version that never made it: no working implementation, or the gate said no. A version
    that is no longer current is superseded whatever its status (`FunctionRecord.superseded`).
    """

    PROPOSED = "proposed"
    CANDIDATE = "candidate"
    ADMITTED = "admitted"
    RETIRED = "retired"
    FAILED = "failed"

    @classmethod
    def _missing_(cls, value: object) -> FunctionStatus | None:
        """`implemented`, the one status of working code before the lifecycle, reads as admitted
        (what it meant to every reader: in the library), so older exports still import."""
        return cls.ADMITTED if value == LEGACY_IMPLEMENTED else None

    @property
    def runs(self) -> bool:
        """A version in this state may run in programs (its code passes the stored-source rule)."""
        return self in (FunctionStatus.CANDIDATE, FunctionStatus.ADMITTED)

    @property
    def gone(self) -> bool:
        """A version in this state is out of the library for good: failed or retired."""
        return self in (FunctionStatus.FAILED, FunctionStatus.RETIRED)


LEGACY_IMPLEMENTED = "implemented"
STATUS_NAMES = (*(status.value for status in FunctionStatus), LEGACY_IMPLEMENTED)
"""Every status a stored or exported version may spell, the legacy one included."""


class RunStatus(StrEnum):
    """Lifecycle of a run: `running`, then `finished`, `interrupted` (Ctrl-C) or `failed` (an error).

    A run still `running` with no process behind it was killed outright; like an interrupted or
    failed build, a rerun resumes it.
    """

    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


def _bool_or_none(value: Any) -> bool | None:
    return None if value is None else bool(value)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One invocation of the pipeline (e.g. an evaluation over a dataset split)."""

    id: int
    kind: str
    status: RunStatus
    model: str | None
    config: dict[str, Any]
    started_at: str
    finished_at: str | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RunRecord:
        return cls(
            id=row["id"],
            kind=row["kind"],
            status=RunStatus(row["status"]),
            model=row["model"],
            config=json.loads(row["config"]),
            started_at=row["started_at"],
            finished_at=row["finished_at"],
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "status": self.status.value}


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """A group of questions for which the Signature agent proposes functions together."""

    id: int
    run_id: int
    index: int
    question_ids: list[str]
    created_at: str
    # What the Signature agent proposed for this batch ({"accepted": [stub dicts], "rejected":
    # [reasons]}, and "queued": the proposals waiting for a later batch, when there are any),
    # recorded before implementation starts; None until then.
    proposals: dict[str, Any] | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> BatchRecord:
        proposals = row.get("proposals")
        return cls(
            id=row["id"],
            run_id=row["run_id"],
            index=row["idx"],
            question_ids=json.loads(row["question_ids"]),
            created_at=row["created_at"],
            proposals=None if proposals is None else json.loads(proposals),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class FunctionRecord:
    """One version of a library function; `is_current` marks the version the library uses."""

    name: str
    normalized_name: str
    version: int
    signature: str
    docstring: str
    code: str | None
    content_hash: str
    status: FunctionStatus
    last_error: str | None
    run_id: int | None
    batch_id: int | None
    model: str | None
    created_at: str
    updated_at: str
    is_current: bool
    dependencies: tuple[str, ...] = field(default=())

    @property
    def superseded(self) -> bool:
        """A later version of the helper took this one's place."""
        return not self.is_current

    @classmethod
    def from_row(cls, row: dict[str, Any], dependencies: tuple[str, ...] = ()) -> FunctionRecord:
        return cls(
            name=row["name"],
            normalized_name=row["normalized_name"],
            version=row["version"],
            signature=row["signature"],
            docstring=row["docstring"],
            code=row["code"],
            content_hash=row["content_hash"],
            status=FunctionStatus(row["status"]),
            last_error=row["last_error"],
            run_id=row["run_id"],
            batch_id=row["batch_id"],
            model=row["model"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            is_current=bool(row["is_current"]),
            dependencies=dependencies,
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        data["dependencies"] = list(self.dependencies)
        return data


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One API-agent try at implementing a function, kept whether or not its test passed."""

    id: int
    function_name: str
    version: int
    attempt: int
    prompt_hash: str | None
    code: str | None
    error: str | None
    test_call: str | None
    test_result: str | None
    passed: bool | None
    run_id: int | None
    batch_id: int | None
    model: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> AttemptRecord:
        return cls(
            id=row["id"],
            function_name=row["function_name"],
            version=row["version"],
            attempt=row["attempt"],
            prompt_hash=row["prompt_hash"],
            code=row["code"],
            error=row["error"],
            test_call=row["test_call"],
            test_result=row["test_result"],
            passed=_bool_or_none(row["passed"]),
            run_id=row["run_id"],
            batch_id=row["batch_id"],
            model=row["model"],
            created_at=row["created_at"],
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ProgramRecord:
    """The Program agent's final program for one question of one run, with its outcome and cost."""

    run_id: int
    question_id: str
    code: str | None
    answer: Any
    error: str | None
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    latency_s: float | None
    correct: bool | None
    batch_id: int | None
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ProgramRecord:
        return cls(
            run_id=row["run_id"],
            question_id=row["question_id"],
            code=row["code"],
            answer=decode_answer(row["answer"]),
            error=row["error"],
            attempts=row["attempts"],
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
            latency_s=row["latency_s"],
            correct=_bool_or_none(row["correct"]),
            batch_id=row["batch_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
