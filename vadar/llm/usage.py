"""Per-call LLM accounting, with totals per scope (e.g. one question) and for the whole run.

Scopes live in a context variable, so threads answering different questions keep separate totals
while sharing one tracker.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from vadar.llm.chat import ChatResponse

ANY_TAG: object = object()  # default for `totals(tag=...)`: do not filter by tag

_active_scopes: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("vadar_llm_scopes", default=())


@contextlib.contextmanager
def usage_scope(name: str) -> Iterator[None]:
    """Attribute the LLM calls made inside the block to `name`, for whichever tracker records them:
    code deep in a job (the gate, a search) names its stage without holding the tracker."""
    token = _active_scopes.set(_active_scopes.get() + (name,))
    try:
        yield
    finally:
        _active_scopes.reset(token)


@dataclass(frozen=True)
class CallRecord:
    """One chat call as seen by the caller (cache hits included)."""

    tag: str | None
    scopes: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int | None
    latency_s: float
    from_cache: bool
    model: str = ""


@dataclass
class UsageTotals:
    """Sums over calls.

    `prompt_tokens`/`completion_tokens` count every response, cache hits with their original counts,
    so a rerun from a warm cache reports the same usage. `fresh_*` count only what the endpoint
    actually processed in this run.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    fresh_prompt_tokens: int = 0
    fresh_completion_tokens: int = 0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, record: CallRecord) -> None:
        self.calls += 1
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens
        self.latency_s += record.latency_s
        if record.from_cache:
            self.cache_hits += 1
        else:
            self.fresh_prompt_tokens += record.prompt_tokens
            self.fresh_completion_tokens += record.completion_tokens
            self.cached_prompt_tokens += record.cached_prompt_tokens or 0

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["total_tokens"] = self.total_tokens
        data["latency_s"] = round(self.latency_s, 6)
        return data


@dataclass
class UsageTracker:
    """Collects `CallRecord`s; safe to share between threads."""

    records: list[CallRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, response: ChatResponse, *, tag: str | None = None) -> CallRecord:
        """Account one response under the scopes active in the caller's context."""
        rec = CallRecord(
            tag=tag,
            scopes=_active_scopes.get(),
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            cached_prompt_tokens=response.cached_prompt_tokens,
            latency_s=response.latency_s,
            from_cache=response.from_cache,
            model=response.model,
        )
        with self._lock:
            self.records.append(rec)
        return rec

    @staticmethod
    def scope(name: str) -> contextlib.AbstractContextManager[None]:
        """Attribute calls made inside the block to `name` (scopes nest: a call counts for each)."""
        return usage_scope(name)

    @staticmethod
    def current_scopes() -> tuple[str, ...]:
        return _active_scopes.get()

    def _snapshot(self) -> list[CallRecord]:
        with self._lock:
            return list(self.records)

    def totals(self, scope: str | None = None, *, tag: str | None | object = ANY_TAG) -> UsageTotals:
        """Totals for the run, or for one scope and/or one tag (`tag=None` selects untagged calls)."""
        return _sum(
            r for r in self._snapshot() if (scope is None or scope in r.scopes) and (tag is ANY_TAG or r.tag == tag)
        )

    def scopes(self) -> list[str]:
        """Every scope name seen, in first-seen order."""
        seen: dict[str, None] = {}
        for r in self._snapshot():
            seen.update(dict.fromkeys(r.scopes))
        return list(seen)

    def tags(self) -> list[str | None]:
        return list(dict.fromkeys(r.tag for r in self._snapshot()))

    def summary(self) -> dict[str, Any]:
        """Plain dict for logs and reports: overall totals, then per scope and per tag."""
        return {
            "total": self.totals().as_dict(),
            "scopes": {s: self.totals(s).as_dict() for s in self.scopes()},
            "tags": {str(t): self.totals(tag=t).as_dict() for t in self.tags()},
        }

    def reset(self) -> None:
        with self._lock:
            self.records.clear()


def _sum(records: Iterable[CallRecord]) -> UsageTotals:
    totals = UsageTotals()
    for r in records:
        totals.add(r)
    return totals
