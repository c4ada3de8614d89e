"""The API agent's reports kept in the store: each attempt, each candidate, each search, each failure.

The agent only reads the library (`vadar.agents.library_view`); what it did reaches the store
here, with the run, batch and model that made it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from api_store import ApiStore


class StoreLog:
    """An `ImplementationLog` that writes to `store`, every row pointing back to its run and batch."""

    def __init__(self, store: ApiStore, *, run_id: int | None = None, batch_id: int | None = None,
                 model: str | None = None) -> None:
        self.store = store
        self.provenance: dict[str, Any] = {"run_id": run_id, "batch_id": batch_id, "model": model}

    def attempt(self, name: str, attempt: int, *, code: str | None, error: str | None, test_call: str | None,
                test_result: str | None, passed: bool, prompt_hash: str) -> None:
        self.store.record_attempt(name, attempt, code=code, error=error, test_call=test_call,
                                  test_result=test_result, passed=passed, prompt_hash=prompt_hash, **self.provenance)

    def implemented(self, name: str, code: str, dependencies: Sequence[str]) -> None:
        self.store.implement(name, code, dependencies=list(dependencies), **self.provenance)

    def searched(self, name: str, evidence: Mapping[str, Any]) -> None:
        self.store.record_decision(name, "searched", mode="search", evidence=evidence)

    def failed(self, name: str, reason: str) -> None:
        self.store.mark_failed(name, reason)
