"""The one real `ChatModel`: an OpenAI-compatible chat-completions client with retries and caching.

OpenAI, vLLM, Ollama and the embedded llama.cpp server all go through this same code path; only
`base_url` differs. Replies are streamed, so a silent endpoint is noticed after
`inactivity_timeout_s` without a byte instead of after the whole call's budget; `timeout_s` bounds
one `complete()` call in all, retries included. Transient failures (connection, silence, a 200
whose body is not a completion, 408/429/5xx) are retried with exponential backoff while time is
left; anything else fails at once with an error that names endpoint, model and status.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import openai
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from vadar.config import LLMConfig, VadarConfig
from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatRequest, ChatResponse, canonical_json, request_key
from vadar.llm.errors import (
    LLMBadResponseError,
    LLMError,
    LLMRequestError,
    LLMSilentError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from vadar.llm.repetition import REPETITION, RepetitionGuard, find_loop
from vadar.llm.deadline import DeadlineCloser
from vadar.llm.reply import StreamedReply, read_plain
from vadar.llm.usage import UsageTracker
from vadar.text import invalid_unicode

log = logging.getLogger(__name__)

httpx: Any = sys.modules.get("httpx2") or importlib.import_module("httpx")
"""The SDK's own HTTP library (`httpx`, renamed `httpx2` in newer SDKs): its timeouts and errors."""

_TRANSIENT_STATUS = frozenset({408, 429})
_HOW_TO_FIX = (
    "Start the server at that address, set VADAR_LLM_BASE_URL to a running OpenAI-compatible "
    "endpoint, or unset VADAR_LLM_BASE_URL to use the embedded model."
)


SILENT_ATTEMPTS = 2
"""Attempts that may each end in `inactivity_timeout_s` of silence before the call gives up."""

TokenCallback = Callable[[str], None]
"""Called with each piece of reply text as it streams in (for live progress); must not raise."""


def is_transient(exc: BaseException) -> bool:
    """Whether retrying could help: the endpoint was unreachable, silent, garbled, rate-limited or failing."""
    if isinstance(exc, (openai.APIConnectionError, LLMSilentError, LLMBadResponseError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _TRANSIENT_STATUS or exc.status_code >= 500
    return False


class LLMClient:
    """`ChatModel` over `openai.OpenAI`, with a response cache and per-call usage accounting."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        base_url: str | None = None,
        cache: ResponseCache | None = None,
        usage: UsageTracker | None = None,
        tag: str | None = None,
        retry_wait_s: float = 1.0,
        retry_wait_max_s: float = 30.0,
        on_token: TokenCallback | None = None,
        silence_setting: str = "VADAR_LLM_INACTIVITY_TIMEOUT_S",
    ) -> None:
        self.config = config
        self.silence_setting = silence_setting  # the variable that sets `inactivity_timeout_s`, for errors
        self.base_url = base_url or config.base_url
        if not self.base_url:
            raise LLMUnavailableError(
                "No LLM endpoint configured (base_url is empty). Set VADAR_LLM_BASE_URL to an "
                "OpenAI-compatible endpoint, or let vadar start the embedded model and pass its URL."
            )
        self.model = config.model
        self.cache = cache if config.cache else None
        self.usage = usage
        self.tag = tag
        self.retry_wait_s = retry_wait_s
        self.retry_wait_max_s = retry_wait_max_s
        self.on_token = on_token
        self._pending: list[str] = []  # cache keys of replies not yet accepted, shared by tagged views
        self._pending_lock = threading.Lock()
        self._openai = openai.OpenAI(
            base_url=self.base_url, api_key=config.api_key, timeout=self._timeout(config.timeout_s), max_retries=0
        )

    def tagged(self, tag: str) -> LLMClient:
        """A view of this client whose calls are accounted under `tag` (connection, cache and usage shared)."""
        view = copy.copy(self)
        view.tag = tag
        return view

    @property
    def reply_cap(self) -> int:
        """The configured ceiling on any one reply (`llm.max_tokens`): a role asks for at most its own limit."""
        return self.config.max_tokens

    def request_for(self, request: ChatRequest) -> dict[str, Any]:
        """The effective request (defaults from config filled in, `max_tokens` within the reply cap);
        its canonical JSON is the cache key."""
        sent = {
            "model": self.model,
            "messages": list(request.messages),
            "temperature": self.config.temperature if request.temperature is None else request.temperature,
            "max_tokens": request.capped(self.reply_cap).max_tokens,
            "seed": self.config.seed if request.seed is None else request.seed,
            "stop": list(request.stop) if request.stop else None,
        }
        if request.response_format is not None:  # absent otherwise: older requests keep their cache keys
            sent["response_format"] = request.response_format
        return sent

    def complete(self, request: ChatRequest) -> ChatResponse:
        sent = self.request_for(request)
        problem = invalid_unicode(canonical_json(sent))
        if problem is not None:
            raise LLMRequestError(f"the request to {self._where()} {problem}; it cannot be sent")
        key = request_key(**sent)
        self.accept_pending()  # the caller came back for more: the previous replies served it
        response = self.cache.get(key) if self.cache is not None else None
        if response is not None:
            response = dataclasses.replace(response, from_cache=True, latency_s=0.0)
        else:
            response = self._call(sent)
            if self.cache is not None and self.cache.written(self.cache.put, key, sent, response, pending=True):
                with self._pending_lock:
                    self._pending.append(key)
        if response.from_cache or not self.config.stream:  # the guard watched only fresh streams
            response = _without_loop(response, self.config.stop_repeats)
        if self.usage is not None:
            self.usage.record(response, tag=self.tag)
        return response

    def accept_pending(self) -> None:
        """Let the cache replay the replies received so far (the caller did not fail on them)."""
        keys = self._take_pending()
        if keys and self.cache is not None:
            self.cache.written(self.cache.accept, keys)

    def discard_pending(self) -> None:
        """Forget the replies not yet accepted: the run failed after them, so ask again next time."""
        keys = self._take_pending()
        if keys and self.cache is not None:
            self.cache.written(self.cache.discard, keys)

    def _take_pending(self) -> list[str]:
        with self._pending_lock:
            keys, self._pending[:] = list(self._pending), []
        return keys

    def close(self) -> None:
        """Close the connection; replies not yet accepted stay pending (asked again next time)."""
        self._openai.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """A block that ends normally accepts its last replies; one that raises discards them."""
        try:
            if exc_type is None:
                self.accept_pending()
            else:
                self.discard_pending()
        finally:
            self.close()

    # -- the network call -------------------------------------------------------------------------

    def _timeout(self, seconds: float) -> openai.Timeout:
        """Per-read timeout = inactivity (no byte for that long), capped by the time left in the call."""
        silence = max(min(self.config.inactivity_timeout_s, seconds), 0.001)
        return openai.Timeout(silence, connect=min(silence, 30.0))

    def _call(self, request: dict[str, Any]) -> ChatResponse:
        """Send one request, retrying transient failures within `timeout_s`; latency covers the whole wait."""
        kwargs = {k: v for k, v in request.items() if v is not None}
        attempts = self.config.max_retries + 1
        start = time.perf_counter()
        deadline = time.monotonic() + self.config.timeout_s
        silences = [0]

        def worth_retrying(exc: BaseException) -> bool:
            if isinstance(exc, LLMSilentError):  # a hung endpoint is given SILENT_ATTEMPTS, not the whole budget
                silences[0] += 1
                return silences[0] < SILENT_ATTEMPTS
            return is_transient(exc)

        retrying = Retrying(
            stop=stop_after_attempt(attempts) | stop_after_delay(self.config.timeout_s),
            wait=wait_exponential(multiplier=self.retry_wait_s, max=self.retry_wait_max_s),
            retry=retry_if_exception(worth_retrying),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            reply = retrying(self._attempt, kwargs, deadline)
        except openai.APIError as exc:
            raise self._translate(exc, retrying.statistics.get("attempt_number", attempts)) from exc
        except LLMError as exc:
            tried = retrying.statistics.get("attempt_number", 1)
            raise type(exc)(f"{exc} ({tried} attempt(s) in {time.perf_counter() - start:.0f} s)") from exc
        return reply.response(self, time.perf_counter() - start)

    def _attempt(self, kwargs: dict[str, Any], deadline: float) -> StreamedReply:
        """One request, read against the inactivity and total limits.

        Whatever the endpoint sends (keep-alive comments, empty chunks, a trickling body), the
        response is closed when the call's deadline passes, and anything that fails after the
        deadline is the total timeout.
        """
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._total_timeout(None)
        closer = DeadlineCloser(left)
        try:
            return self._read(kwargs, deadline, closer)
        except LLMTimeoutError:
            raise
        except Exception as exc:
            if closer.fired or time.monotonic() >= deadline - 0.01:
                raise self._total_timeout(closer.reply) from exc
            raise
        finally:
            closer.cancel()

    def _read(self, kwargs: dict[str, Any], deadline: float, closer: DeadlineCloser) -> StreamedReply:
        """Streamed (default) or plain; translate the SDK's failures into ours."""
        client = self._openai.with_options(timeout=self._timeout(deadline - time.monotonic()))
        limit = _reply_char_limit(kwargs.get("max_tokens"))
        repeats = self.config.stop_repeats
        try:
            if not self.config.stream:
                with client.chat.completions.with_streaming_response.create(**kwargs) as raw:
                    closer.watch(raw.close)
                    return read_plain(raw, limit, deadline, self._where(), self._total_timeout)
            stream = client.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
            closer.watch(stream.close)
            reply = closer.reply = StreamedReply(self._where(), limit)
            guard = RepetitionGuard(repeats=repeats) if repeats else None
            with stream:
                for chunk in stream:
                    piece = reply.add(chunk)
                    if piece and self.on_token is not None:
                        self.on_token(piece)
                    if time.monotonic() > deadline:
                        raise self._total_timeout(reply)
                    if guard is not None and piece and guard.feed(piece) is not None:
                        break
                    if reply.over_limit:  # kept to `limit` characters, however large the chunk
                        reply.cut_off()
                        break
            loop = guard.feed("\n") if guard is not None else None  # also judges an unended last line
            if loop is not None:
                reply.stop_repeating(loop)
            return reply.finished()
        except (httpx.TimeoutException, openai.APITimeoutError) as exc:
            if time.monotonic() >= deadline - 0.01:
                raise self._total_timeout(None) from exc
            raise LLMSilentError(
                f"LLM endpoint {self._where()} sent nothing for {self.config.inactivity_timeout_s:g} s "
                f"({self.silence_setting}). If the model is just slow to read a long prompt, "
                f"raise it. {_HOW_TO_FIX}"
            ) from exc
        except (httpx.TransportError, httpx.DecodingError) as exc:  # dropped mid-stream
            raise openai.APIConnectionError(request=httpx.Request("POST", self.base_url)) from exc
        except (ValueError, openai.APIResponseValidationError) as exc:  # a 200 that is not JSON
            raise LLMBadResponseError(
                f"LLM endpoint {self._where()} answered with a body that is not a chat completion "
                f"({_describe(exc)}). Check that VADAR_LLM_BASE_URL points at an OpenAI-compatible /v1 endpoint."
            ) from exc

    def _total_timeout(self, reply: StreamedReply | None) -> LLMTimeoutError:
        got = f"; {len(reply.text)} characters had arrived" if reply is not None and reply.text else ""
        return LLMTimeoutError(
            f"LLM call to {self._where()} took longer than {self.config.timeout_s:g} s in all "
            f"(VADAR_LLM_TIMEOUT_S){got}. Raise VADAR_LLM_TIMEOUT_S if the model is just slow."
        )

    def _where(self) -> str:
        return f"{self.base_url} (model '{self.model}')"

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "LLM call to %s failed (attempt %d): %s; retrying in %.2fs",
            self.base_url, state.attempt_number, _describe(exc), wait,
        )

    def _translate(self, exc: openai.APIError, attempts: int) -> LLMError:
        where = f"{self.base_url} (model '{self.model}')"
        if isinstance(exc, openai.APIConnectionError):
            return LLMUnavailableError(
                f"LLM endpoint {where} is unreachable after {attempts} attempt(s): {_describe(exc)}. "
                f"{_HOW_TO_FIX}"
            )
        if isinstance(exc, openai.APIStatusError):
            detail = _describe(exc)
            if is_transient(exc):
                return LLMUnavailableError(
                    f"LLM endpoint {where} kept failing with HTTP {exc.status_code} after {attempts} "
                    f"attempt(s): {detail}. {_HOW_TO_FIX}"
                )
            hint = {
                401: " Check VADAR_LLM_API_KEY (or OPENAI_API_KEY).",
                403: " Check VADAR_LLM_API_KEY (or OPENAI_API_KEY).",
                404: " Check VADAR_LLM_MODEL and that VADAR_LLM_BASE_URL ends in /v1.",
            }.get(exc.status_code, "")
            return LLMError(f"LLM endpoint {where} rejected the request with HTTP {exc.status_code}: {detail}.{hint}")
        return LLMError(f"LLM endpoint {where} returned an unusable answer: {_describe(exc)}")

def _without_loop(response: ChatResponse, repeats: int) -> ChatResponse:
    """A reply the streaming guard did not watch (plain, or replayed from the cache) gets the same
    treatment afterwards: cut to the first copy of what it repeats, marked as repetition."""
    if not repeats or response.finish_reason == REPETITION:
        return response
    loop = find_loop(response.text, repeats)
    if loop is None:
        return response
    return dataclasses.replace(response, text=response.text[: loop.first_end], finish_reason=REPETITION)


def _describe(exc: BaseException | None) -> str:
    """A one-line account of an SDK error: its message, plus the server's own error text when present."""
    if exc is None:
        return "unknown error"
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, openai.APIConnectionError) and cause is not None and str(cause) not in text:
        text = f"{text} ({type(cause).__name__}: {cause})"
    return text[:500]


def build_chat_model(
    config: VadarConfig, *, base_url: str | None = None, usage: UsageTracker | None = None,
    on_token: TokenCallback | None = None,
) -> LLMClient:
    """Wire an `LLMClient` from the whole configuration: cache at `paths.llm_cache` when `llm.cache`.

    Starts no server; whoever starts the embedded one passes its URL as `base_url`. `on_token`
    hears each streamed piece of reply text (a live display counts them).
    """
    cache = ResponseCache(config.paths.llm_cache) if config.llm.cache else None
    llm, setting = config.llm, "VADAR_LLM_INACTIVITY_TIMEOUT_S"
    if not llm.base_url:  # the embedded server: a CPU model may be silent for long over a prompt
        llm = dataclasses.replace(llm, inactivity_timeout_s=config.embedded.inactivity_timeout_s)
        setting = "VADAR_EMBEDDED_INACTIVITY_TIMEOUT_S"
    return LLMClient(llm, base_url=base_url, cache=cache, usage=usage, on_token=on_token, silence_setting=setting)


def _reply_char_limit(max_tokens: Any) -> int:
    """Characters read before a reply counts as cut off: far more than `max_tokens` tokens can
    spell, so only a server that ignores `max_tokens` reaches it; it keeps a runaway reply out of
    the retry conversation."""
    tokens = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 4096
    return max(32 * tokens, 16_384)
