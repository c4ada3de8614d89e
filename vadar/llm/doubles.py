"""Test doubles for `ChatModel`: a scripted model and JSONL cassettes that record and replay.

They let agent tests assert on prompts and replay real model output deterministically, offline.
A scripted reply that depends on who asks answers by the request's `Role` (`ByRole`), never by
the wording of a prompt, so rewording a prompt leaves every other test's script as it was.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Union, runtime_checkable

from vadar.llm.chat import ChatModel, ChatRequest, ChatResponse, Message, Role
from vadar.llm.errors import CassetteMissError, ScriptExhaustedError
from vadar.llm.usage import UsageTracker

ScriptReply = Union[str, Callable[[list[Message]], str]]  # a reply, or one made from the messages


@runtime_checkable
class Answerer(Protocol):
    """A script item that answers knowing which agent and step asks."""

    def answer(self, role: Role | None, messages: list[Message]) -> str: ...


@dataclass(frozen=True)
class ByRole:
    """Answers each role with its own reply, and any other role with `default`.

    A role with no reply and no default is an error: the test did not expect that step to ask.
    """

    replies: Mapping[Role, ScriptReply]
    default: ScriptReply | None = None

    def answer(self, role: Role | None, messages: list[Message]) -> str:
        reply = self.replies.get(role, self.default) if role is not None else self.default
        if reply is None:
            raise AssertionError(f"the script has no reply for role {role} (it answers {', '.join(sorted(self.replies))})")
        return reply(messages) if callable(reply) else reply


ScriptItem = Union[str, ChatResponse, Answerer, Callable[[list[Message]], str], BaseException, type[BaseException]]


def approx_tokens(text: str) -> int:
    """A cheap stand-in for a tokenizer (whitespace words), good enough to exercise accounting."""
    return len(text.split())


def _messages_tokens(messages: list[Message]) -> int:
    return sum(approx_tokens(str(m.get("content") or "")) for m in messages)


class ScriptedLLM:
    """Returns scripted responses in order and records every request it received.

    Script items: a string (the reply), a `ChatResponse`, an `Answerer` such as `ByRole` (a reply
    chosen by the request's role), a callable `messages -> str`, or an exception (instance or class)
    to raise for that call. `reply_cap` plays the configured `llm.max_tokens`: requests are recorded
    with at most that many tokens, as the client sends them.
    """

    def __init__(
        self,
        responses: Iterable[ScriptItem],
        *,
        model: str = "scripted",
        usage: UsageTracker | None = None,
        tag: str | None = None,
        reply_cap: int | None = None,
    ) -> None:
        self._script: deque[ScriptItem] = deque(responses)
        self.reply_cap = reply_cap
        self._lock = threading.Lock()
        self.model = model
        self.usage = usage
        self.tag = tag
        self.calls: list[list[Message]] = []  # messages of every call, deep-copied
        self.requests: list[dict[str, Any]] = []  # messages plus sampling settings of every call
        self.roles: list[Role | None] = []  # which agent and step made every call

    @property
    def remaining(self) -> int:
        return len(self._script)

    @property
    def last_messages(self) -> list[Message]:
        if not self.calls:
            raise AssertionError("ScriptedLLM has not been called")
        return self.calls[-1]

    def calls_of(self, role: Role) -> list[list[Message]]:
        """The messages of every call made in `role`, in order."""
        return [call for call, made_in in zip(self.calls, self.roles, strict=True) if made_in == role]

    def complete(self, request: ChatRequest) -> ChatResponse:
        request = request.capped(self.reply_cap)
        snapshot = copy.deepcopy(list(request.messages))
        with self._lock:
            self.calls.append(snapshot)
            self.roles.append(request.role)
            self.requests.append(
                {"messages": snapshot, "max_tokens": request.max_tokens, "temperature": request.temperature,
                 "stop": list(request.stop) if request.stop else None, **request.options()}
            )
            if not self._script:
                last = str(snapshot[-1].get("content", "")) if snapshot else ""
                raise ScriptExhaustedError(
                    f"ScriptedLLM script ran out: call #{len(self.calls)} has no scripted response. "
                    f"Last message was: {last[:300]!r}"
                )
            item = self._script.popleft()
        if isinstance(item, BaseException) or (isinstance(item, type) and issubclass(item, BaseException)):
            raise item
        if isinstance(item, ChatResponse):
            response = item
        else:
            if isinstance(item, Answerer):
                text = item.answer(request.role, snapshot)
            else:
                text = item(snapshot) if callable(item) else item
            if not isinstance(text, str):
                raise TypeError(f"ScriptedLLM script item produced {type(text).__name__}, expected str")
            response = ChatResponse(
                text=text,
                prompt_tokens=_messages_tokens(snapshot),
                completion_tokens=approx_tokens(text),
                model=self.model,
                finish_reason="stop",
            )
        if self.usage is not None:
            self.usage.record(response, tag=self.tag)
        return response


class RecordingLLM:
    """Wraps a real `ChatModel` and appends every exchange to a JSONL cassette."""

    def __init__(self, inner: ChatModel, path: Path | str) -> None:
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    @property
    def reply_cap(self) -> int | None:
        return self.inner.reply_cap

    def complete(self, request: ChatRequest) -> ChatResponse:
        request = request.capped(self.reply_cap)  # recorded as the inner model sends it
        response = self.inner.complete(request)
        entry = {
            "key": request.caller_key(),
            "request": {
                "messages": list(request.messages),
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
                "stop": list(request.stop) if request.stop else None,
                **request.options(),
            },
            "response": response.to_dict(),
        }
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)  # one write per entry, so a crash loses at most the last line
        return response


class ReplayLLM:
    """Answers from a cassette by request key; identical requests replay their recordings in order."""

    def __init__(self, path: Path | str, *, usage: UsageTracker | None = None, tag: str | None = None,
                 reply_cap: int | None = None) -> None:
        self.path = Path(path)
        self.reply_cap = reply_cap
        self.usage = usage
        self.tag = tag
        self._lock = threading.Lock()
        self._entries: dict[str, deque[ChatResponse]] = {}
        self._last: dict[str, ChatResponse] = {}
        self.requests: list[dict[str, Any]] = []
        if not self.path.is_file():
            raise CassetteMissError(f"cassette {self.path} does not exist; record it with RecordingLLM first")
        for lineno, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                self._entries.setdefault(entry["key"], deque()).append(ChatResponse.from_dict(entry["response"]))
                self.requests.append(entry["request"])
            except (ValueError, KeyError, TypeError) as exc:
                raise CassetteMissError(f"cassette {self.path} line {lineno} is malformed: {exc}") from exc

    def __len__(self) -> int:
        return len(self.requests)

    def complete(self, request: ChatRequest) -> ChatResponse:
        request = request.capped(self.reply_cap)
        key = request.caller_key()
        with self._lock:
            queue = self._entries.get(key)
            if queue:
                response = self._last[key] = queue.popleft()
            elif key in self._last:
                response = self._last[key]  # asked more often than recorded: repeat the latest answer
            else:
                raise CassetteMissError(self._miss_message(request))
        if self.usage is not None:
            self.usage.record(response, tag=self.tag)
        return response

    def _miss_message(self, request: ChatRequest) -> str:
        shown = "\n".join(f"  [{m.get('role')}] {str(m.get('content', ''))[:400]!r}" for m in request.messages)
        stop = list(request.stop) if request.stop else None
        return (
            f"cassette {self.path} ({len(self.requests)} recorded request(s)) has no response for this request "
            f"(max_tokens={request.max_tokens}, temperature={request.temperature}, stop={stop}):\n{shown}\n"
            "Re-record the cassette with RecordingLLM if the prompt changed on purpose."
        )
