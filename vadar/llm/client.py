"""The one real `ChatModel`: an OpenAI-compatible chat-completions client with retries and caching.

OpenAI, vLLM, Ollama and the embedded llama.cpp server all go through this same code path; only
`base_url` differs. Transient failures (connection, timeout, 408/429/5xx) are retried with
exponential backoff; anything else fails at once with an error that names endpoint, model and status.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from vadar.config import LLMConfig, VadarConfig
from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatResponse, Message, request_key
from vadar.llm.errors import LLMEmptyResponseError, LLMError, LLMUnavailableError
from vadar.llm.usage import UsageTracker

log = logging.getLogger(__name__)

_TRANSIENT_STATUS = frozenset({408, 429})
_HOW_TO_FIX = (
    "Start the server at that address, set VADAR_LLM_BASE_URL to a running OpenAI-compatible "
    "endpoint, or unset VADAR_LLM_BASE_URL to use the embedded model."
)


def is_transient(exc: BaseException) -> bool:
    """Whether retrying could help: the endpoint was unreachable, slow, rate-limited or failing."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
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
    ) -> None:
        self.config = config
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
        self._openai = openai.OpenAI(
            base_url=self.base_url, api_key=config.api_key, timeout=config.timeout_s, max_retries=0
        )

    def tagged(self, tag: str) -> LLMClient:
        """A view of this client whose calls are accounted under `tag` (connection, cache and usage shared)."""
        view = copy.copy(self)
        view.tag = tag
        return view

    def request_for(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """The effective request (defaults from config filled in); its canonical JSON is the cache key."""
        return {
            "model": self.model,
            "messages": messages,
            "temperature": self.config.temperature if temperature is None else temperature,
            "max_tokens": self.config.max_tokens if max_tokens is None else max_tokens,
            "seed": self.config.seed,
            "stop": list(stop) if stop else None,
        }

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | None = None,
    ) -> ChatResponse:
        request = self.request_for(messages, max_tokens=max_tokens, temperature=temperature, stop=stop)
        key = request_key(**request)
        response = self.cache.get(key) if self.cache is not None else None
        if response is not None:
            response = dataclasses.replace(response, from_cache=True, latency_s=0.0)
        else:
            response = self._call(request)
            if self.cache is not None:
                self.cache.put(key, request, response)
        if self.usage is not None:
            self.usage.record(response, tag=self.tag)
        return response

    def close(self) -> None:
        self._openai.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the network call -------------------------------------------------------------------------

    def _call(self, request: dict[str, Any]) -> ChatResponse:
        """Send one request, retrying transient failures; latency covers the whole wait, retries included."""
        kwargs = {k: v for k, v in request.items() if v is not None}
        attempts = self.config.max_retries + 1
        retrying = Retrying(
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=self.retry_wait_s, max=self.retry_wait_max_s),
            retry=retry_if_exception(is_transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        start = time.perf_counter()
        try:
            completion = retrying(self._openai.chat.completions.create, **kwargs)
        except openai.APIError as exc:
            raise self._translate(exc, attempts) from exc
        return self._parse(completion, time.perf_counter() - start)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "LLM call to %s failed (attempt %d): %s; retrying in %.2fs",
            self.base_url, state.attempt_number, _describe(exc), wait,
        )

    def _translate(self, exc: openai.APIError, attempts: int) -> LLMError:
        where = f"{self.base_url} (model '{self.model}')"
        if isinstance(exc, openai.APITimeoutError):
            return LLMUnavailableError(
                f"LLM endpoint {where} timed out after {self.config.timeout_s}s on each of {attempts} "
                f"attempt(s). If the model is just slow, raise VADAR_LLM_TIMEOUT_S. {_HOW_TO_FIX}"
            )
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

    def _parse(self, completion: Any, latency_s: float) -> ChatResponse:
        where = f"{self.base_url} (model '{self.model}')"
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise LLMEmptyResponseError(f"LLM endpoint {where} returned no choices.")
        choice = choices[0]
        text = getattr(choice.message, "content", None) if choice.message is not None else None
        if not text:
            reason = choice.finish_reason
            hint = " The output hit max_tokens; raise VADAR_LLM_MAX_TOKENS." if reason == "length" else ""
            raise LLMEmptyResponseError(
                f"LLM endpoint {where} returned empty content (finish_reason={reason!r}).{hint}"
            )
        usage = getattr(completion, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        return ChatResponse(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            cached_prompt_tokens=int(cached) if cached is not None else None,
            latency_s=latency_s,
            from_cache=False,
            model=getattr(completion, "model", None) or self.model,
            finish_reason=choice.finish_reason,
        )


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
    config: VadarConfig, *, base_url: str | None = None, usage: UsageTracker | None = None
) -> LLMClient:
    """Wire an `LLMClient` from the whole configuration: cache at `paths.llm_cache` when `llm.cache`.

    Starts no server; whoever starts the embedded one passes its URL as `base_url`.
    """
    cache = ResponseCache(config.paths.llm_cache) if config.llm.cache else None
    return LLMClient(config.llm, base_url=base_url, cache=cache, usage=usage)
