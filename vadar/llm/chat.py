"""The chat interface agents depend on, its request and response types, and the canonical request key.

Agents only see `ChatModel`, so the real client, scripted doubles and cassettes are interchangeable.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]


class Role(StrEnum):
    """Which agent and step a request serves.

    Scripted doubles answer by it, so rewording a prompt cannot change which scripted reply a test
    gets. It is never sent to the endpoint nor part of a request's key: recordings stay valid.
    """

    SIGNATURE = "signature"  # the Signature agent proposes helper stubs
    API_IMPLEMENT = "api.implement"  # the API agent implements a helper (every sample of a search)
    HELPER_CHECK = "helper.check"  # behaviour checks of a proposed helper
    PROGRAM = "program"  # the Program agent writes, repairs and revises a program
    FORMALIZE = "formalize"  # the task constraint stated before a program
    UNIT_TESTS = "unit_tests"  # made-up scenes a program is tested on
    REFLECT = "reflect"  # the check of a program against its question
    TOOL_STEP = "tool_step"  # one turn of the tool-calling agent
    DIRECT = "direct"  # an answer without a program
    DISTILL_NAME = "distill.name"  # the name and docstring of a distilled helper
    GROUP_WRITE = "group.write"  # one helper written for a group of questions
    GROUP_FRAME = "group.frame"  # a group helper's calls for the group's other questions
    GROUP_DOCSTRING = "group.docstring"  # a group helper's docstring, rewritten


@dataclass(frozen=True)
class ChatRequest:
    """One request to a `ChatModel`: the conversation so far and the sampling settings the caller sets.

    An unset setting (None) takes the model's configured one. `seed` draws another sample of the
    same request; `response_format` asks for structured output (a JSON schema). Both are left out
    of the request and its keys when unset, so requests that predate them keep their keys.
    `max_tokens` is the caller's limit (a role's); the model sends at most its own `reply_cap`.
    `role` says which agent and step asks; it is neither sent nor keyed (see `Role`).
    """

    messages: Sequence[Message]
    max_tokens: int | None = None
    temperature: float | None = None
    stop: Sequence[str] | None = None
    seed: int | None = None
    response_format: Mapping[str, Any] | None = None
    role: Role | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # A snapshot: the caller goes on appending to its conversation after asking.
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "stop", tuple(self.stop) if self.stop else None)

    def options(self) -> dict[str, Any]:
        """The optional fields that are set: absent ones must not change a request or its key."""
        options: dict[str, Any] = {}
        if self.seed is not None:
            options["seed"] = self.seed
        if self.response_format is not None:
            options["response_format"] = self.response_format
        return options

    def capped(self, cap: int | None) -> ChatRequest:
        """This request as a model with reply cap `cap` sends it: `min(cap, max_tokens)`."""
        if cap is None or (self.max_tokens is not None and self.max_tokens <= cap):
            return self
        return dataclasses.replace(self, max_tokens=cap)

    def caller_key(self) -> str:
        """The key of what a caller controls (no model, no configured defaults): cassettes use it."""
        return request_key(messages=list(self.messages), max_tokens=self.max_tokens, temperature=self.temperature,
                           stop=list(self.stop) if self.stop else None, **self.options())


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
    """Anything that turns a `ChatRequest` into a `ChatResponse`.

    `reply_cap` is the model's ceiling on any one reply (the configured `llm.max_tokens`; None:
    none): a request is sent with `min(reply_cap, request.max_tokens)`, see `reply_limit`.
    """

    @property
    def reply_cap(self) -> int | None: ...

    def complete(self, request: ChatRequest) -> ChatResponse: ...


def reply_limit(model: ChatModel, max_tokens: int) -> int:
    """The tokens a reply asked for with `max_tokens` may have on `model` (what a cut-off message names)."""
    cap = model.reply_cap
    return max_tokens if cap is None else min(cap, max_tokens)


def canonical_json(value: Any) -> str:
    """Stable JSON (sorted keys, no whitespace) so equal requests hash equally across runs."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(**parts: Any) -> str:
    """sha256 of the canonical JSON of the named request parts (model, messages, sampling settings)."""
    return hashlib.sha256(canonical_json(parts).encode("utf-8")).hexdigest()
