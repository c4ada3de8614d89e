"""Assembling one chat reply from streamed chunks (or one plain completion), with precise errors.

Kept apart from the client so the rules for what counts as a usable reply live in one place:
a body with no completion in it is `LLMBadResponseError` (retried: proxies and restarting servers
produce them), a completion without choices or text is `LLMEmptyResponseError` naming what came.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from openai.types.chat import ChatCompletion

from vadar.llm.chat import ChatResponse
from vadar.llm.errors import LLMBadResponseError, LLMEmptyResponseError, LLMIncompleteError
from vadar.llm.repetition import REPETITION, Loop
from vadar.text import clip, utf8_safe


class _Named(Protocol):
    model: str


def _dump(value: Any) -> str:
    dump = getattr(value, "model_dump_json", None)
    try:
        return clip(dump() if callable(dump) else repr(value), 300)
    except Exception:  # noqa: BLE001 - only for an error message
        return type(value).__name__


COMPLETE = frozenset({"stop", "length", REPETITION})
"""Finish reasons of a complete reply: the model stopped, hit `max_tokens`, or we cut a loop. Any
other (`error`, `content_filter`, a reason a proxy made up) is no reply to keep or cache."""


class StreamedReply:
    """Text, finish reason and usage gathered from chunks as they arrive; at most `limit`
    characters of text are kept, however large a chunk is (`over_limit` says some were dropped)."""

    def __init__(self, where: str, limit: int | None = None) -> None:
        self.where = where
        self.limit = limit
        self.over_limit = False
        self.parts: list[str] = []
        self.length = 0
        self.pieces = 0  # content deltas: about one token each (llama.cpp and vLLM send one)
        self.chunks = 0
        self.choices_seen = False
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.model: str | None = None
        self.last: Any = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def add(self, chunk: Any) -> str:
        """Take one chunk; return the text it adds."""
        self.chunks += 1
        self.last = chunk
        self.model = getattr(chunk, "model", None) or self.model
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return ""
        self.choices_seen = True
        choice = choices[0]
        if getattr(choice, "finish_reason", None):
            self.finish_reason = choice.finish_reason
        delta = getattr(choice, "delta", None)
        piece = getattr(delta, "content", None) or ""
        if not isinstance(piece, str):
            raise LLMBadResponseError(f"LLM endpoint {self.where} sent a chunk whose content is "
                                      f"{type(piece).__name__}, not text: {_dump(chunk)}")
        if self.limit is not None and self.length + len(piece) > self.limit:
            piece = piece[: max(self.limit - self.length, 0)]
            self.over_limit = True
        if piece:
            self.parts.append(piece)
            self.length += len(piece)
            self.pieces += 1
        return piece

    def cut_off(self) -> None:
        """The reply ran past any sensible length: stop reading and treat it as cut off."""
        self.finish_reason = "length"

    def stop_repeating(self, loop: Loop) -> None:
        """The reply repeats itself: keep it up to the first copy of what repeats, mark it so.

        The copies are dropped so that a retry does not see (and copy) the loop.
        """
        self.parts = [self.text[: loop.first_end]]
        self.length = loop.first_end
        self.finish_reason = REPETITION

    def finished(self) -> StreamedReply:
        """Check the stream held a completion; raise the precise error if not."""
        if self.chunks == 0:
            raise LLMBadResponseError(
                f"LLM endpoint {self.where} answered without any completion chunks (an empty or "
                "non-streaming body). Check that VADAR_LLM_BASE_URL points at an OpenAI-compatible "
                "/v1 endpoint, or set VADAR_LLM_STREAM=false."
            )
        if self.choices_seen and self.finish_reason is None:
            raise LLMIncompleteError(
                f"LLM endpoint {self.where} ended a streamed reply before it finished (no finish "
                f"reason; {self.length} characters had arrived): the connection closed early"
            )
        if self.choices_seen and self.finish_reason not in COMPLETE:
            raise LLMIncompleteError(
                f"LLM endpoint {self.where} ended a streamed reply with finish reason "
                f"{clip(repr(self.finish_reason), 80)} ({self.length} characters had arrived): "
                "only 'stop' and 'length' end a complete reply"
            )
        return self

    @classmethod
    def from_completion(cls, completion: Any, where: str) -> StreamedReply:
        """The same checks for a plain (non-streamed) completion."""
        if not hasattr(completion, "choices"):
            raise LLMBadResponseError(
                f"LLM endpoint {where} answered with something that is not a chat completion: "
                f"{_dump(completion)}"
            )
        reply = cls(where)
        reply.chunks = 1
        reply.last = completion
        reply.model = getattr(completion, "model", None)
        reply.usage = getattr(completion, "usage", None)
        choices = completion.choices or []
        if choices:
            reply.choices_seen = True
            choice = choices[0]
            reply.finish_reason = choice.finish_reason
            message = getattr(choice, "message", None)
            content = getattr(message, "content", None) if message is not None else None
            if content:
                reply.parts.append(content)
                reply.length = len(content)
        return reply

    @classmethod
    def too_large(cls, where: str, byte_limit: int) -> StreamedReply:
        """A plain body past `byte_limit`: not parsed, not kept; it reads as a cut-off reply."""
        reply = cls(where)
        reply.chunks = 1
        reply.choices_seen = True
        reply.parts = [f"[the reply was larger than {byte_limit} bytes and was not kept]"]
        reply.finish_reason = "length"
        return reply

    def response(self, client: _Named, latency_s: float) -> ChatResponse:
        """The `ChatResponse`, or `LLMEmptyResponseError` saying what was missing."""
        if not self.choices_seen:
            raise LLMEmptyResponseError(
                f"LLM endpoint {self.where} returned a completion with no choices, so there is no "
                f"answer to read (the server's last message: {_dump(self.last)})."
            )
        text = self.text
        if not text:
            reason = self.finish_reason
            hint = " The output hit max_tokens; raise VADAR_LLM_MAX_TOKENS." if reason == "length" else ""
            raise LLMEmptyResponseError(
                f"LLM endpoint {self.where} returned empty content (finish_reason={reason!r}).{hint}"
            )
        usage = self.usage
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        # A stream we stopped reading never got its usage chunk: count what arrived instead.
        completion = getattr(usage, "completion_tokens", None) if usage is not None else self.pieces
        return ChatResponse(
            text=utf8_safe(text),
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(completion or 0),
            cached_prompt_tokens=int(cached) if cached is not None else None,
            latency_s=latency_s,
            from_cache=False,
            model=self.model or client.model,
            finish_reason=self.finish_reason,
        )


def read_plain(raw: Any, char_limit: int, deadline: float, where: str,
               on_timeout: Callable[[StreamedReply | None], Exception]) -> StreamedReply:
    """Read a plain (non-streamed) completion body with a size bound before parsing it.

    A body over `6 * char_limit` bytes (JSON spells a character in at most 6) holds a reply
    longer than `char_limit` anyway: it is dropped unread, like a streamed reply cut off at
    `char_limit`; a parsed reply over `char_limit` characters is cut there. So a huge reply never
    reaches the cache or the retry conversation whole.
    """
    byte_limit = 6 * char_limit + 65_536
    body = bytearray()
    for piece in raw.iter_bytes():
        body += piece
        if time.monotonic() > deadline:
            raise on_timeout(None)
        if len(body) > byte_limit:
            return StreamedReply.too_large(where, byte_limit)
    data = json.loads(body)  # ValueError: the caller reports a body that is not a completion
    if not isinstance(data, dict):
        raise LLMBadResponseError(f"LLM endpoint {where} answered with something that is not a chat "
                                  f"completion: {clip(repr(data), 300)}")
    reply = StreamedReply.from_completion(ChatCompletion.construct(**data), where)
    if reply.finish_reason is not None and reply.finish_reason not in COMPLETE:
        raise LLMIncompleteError(f"LLM endpoint {where} answered with finish reason "
                                 f"{clip(repr(reply.finish_reason), 80)}: only 'stop' and 'length' end a complete reply")
    if reply.length > char_limit:
        reply.parts = [reply.text[:char_limit]]
        reply.length = char_limit
        reply.cut_off()
    return reply
