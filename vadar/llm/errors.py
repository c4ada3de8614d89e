"""Errors raised by the LLM layer, so callers can tell a bad request from an endpoint that is down."""

from __future__ import annotations


class LLMError(RuntimeError):
    """A chat completion failed in a way retrying will not fix; the message names endpoint and model."""


class LLMUnavailableError(LLMError):
    """The endpoint could not be reached (or kept failing) after every retry."""


class LLMEmptyResponseError(LLMError):
    """The server answered, but without any text to use."""


class LLMSilentError(LLMUnavailableError):
    """The endpoint sent nothing for `inactivity_timeout_s` (retried while time is left)."""


class LLMTimeoutError(LLMUnavailableError):
    """One call took longer than `timeout_s` in all, retries included."""


class LLMBadResponseError(LLMError):
    """HTTP 200, but the body is not a chat completion (not JSON, or no chunks); retried."""


class LLMIncompleteError(LLMBadResponseError):
    """A streamed reply ended without a finish reason (the connection closed early): retried, never cached."""


class LLMRequestError(LLMError):
    """The request itself cannot be sent (text that is not valid Unicode); not retried."""


class LLMCacheError(LLMError):
    """The response cache file cannot be used; the message names the path."""


class ScriptExhaustedError(LLMError):
    """A `ScriptedLLM` was asked for more responses than its script holds."""


class CassetteMissError(LLMError):
    """A `ReplayLLM` got a request that its cassette never recorded."""
