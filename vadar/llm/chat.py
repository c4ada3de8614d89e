"""The chat interface agents depend on, its response type, and the canonical request key.

Agents only see `ChatModel`, so the real client, scripted doubles and cassettes are interchangeable.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]


@dataclass(frozen=True)
class ChatResponse:
    """One completion plus what it cost; token counts are 0 when the server does not report them."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int | None = None  # prompt tokens the server reused from its KV/prompt cache
    latency_s: float = 0.0
    from_cache: bool = False
    model: str = ""
    finish_reason: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatResponse:
        """Rebuild from `to_dict()` output, ignoring keys a newer version may have added."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a list of chat messages into a `ChatResponse`."""

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResponse: ...
    # `seed` (None: the configured one) draws another sample of the same request; `response_format`
    # asks for structured output (a JSON schema). Callers pass them only when set, so a model that
    # predates them keeps working and requests without them stay byte for byte as they were.


def request_options(seed: int | None = None, response_format: dict[str, Any] | None = None) -> dict[str, Any]:
    """The optional request fields that are set: absent ones must not change a request or its key."""
    options: dict[str, Any] = {}
    if seed is not None:
        options["seed"] = seed
    if response_format is not None:
        options["response_format"] = response_format
    return options


def canonical_json(value: Any) -> str:
    """Stable JSON (sorted keys, no whitespace) so equal requests hash equally across runs."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(**parts: Any) -> str:
    """sha256 of the canonical JSON of the named request parts (model, messages, sampling settings)."""
    return hashlib.sha256(canonical_json(parts).encode("utf-8")).hexdigest()
