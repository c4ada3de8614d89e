"""The host-side record of a program's host-function calls, bounded in count and size.

A program decides what it passes to `loc`, `vqa` and friends and how often; keeping every
argument as sent let 40 calls with a 20 MB string grow the host by 800 MB and write a 300 MB
results line. Calls are recorded in full while small; a large argument or result is kept as a
short summary, and past a count or size budget calls are only counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vadar.text import bounded_repr, clip

MAX_RECORDED_CALLS = 200
"""Calls recorded per execution; later ones are only counted (`ExecutionResult.calls_dropped`)."""

MAX_RECORDED_CHARS = 200_000
"""Approximate text size of all recorded arguments and results of one execution."""

MAX_VALUE_CHARS = 1_000
"""An argument or result whose text is longer is recorded as a summary."""


@dataclass
class HostCall:
    """One call the program made to a host function, for tracing (large values summarised)."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any]
    result: Any = None
    error: str | None = None
    seconds: float = 0.0


def summarize(value: Any) -> tuple[Any, int]:
    """`value` itself when its text is short, else a summary string; and the text size."""
    text = bounded_repr(value, MAX_VALUE_CHARS + 1)
    if len(text) <= MAX_VALUE_CHARS:
        return value, len(text)
    if isinstance(value, str):
        summary = f"<str of {len(value)} characters: {clip(value, 60)!r}>"
    elif isinstance(value, (list, tuple, set, frozenset, dict)):
        summary = f"<{type(value).__name__} of {len(value)} items: {bounded_repr(value, 120)}>"
    else:
        summary = f"<{type(value).__name__}: {bounded_repr(value, 120)}>"
    return summary, len(summary)


class CallLog:
    """Collects `HostCall`s for one execution within the budgets above."""

    def __init__(self, calls: list[HostCall]) -> None:
        self.calls = calls
        self.chars = 0
        self.dropped = 0

    def start(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> HostCall:
        """The record for a new call; appended to the log only while there is room."""
        recorded_args = []
        size = len(name)
        for value in args:
            kept, chars = summarize(value)
            recorded_args.append(kept)
            size += chars
        recorded_kwargs = {}
        for key, value in kwargs.items():
            kept, chars = summarize(value)
            recorded_kwargs[key] = kept
            size += chars + len(key)
        call = HostCall(name=name, args=recorded_args, kwargs=recorded_kwargs)
        if len(self.calls) < MAX_RECORDED_CALLS and self.chars + size <= MAX_RECORDED_CHARS:
            self.calls.append(call)
            self.chars += size
        else:
            self.dropped += 1
        return call

    def finish(self, call: HostCall, result: Any) -> None:
        """Record what the call returned (summarised when large)."""
        call.result, chars = summarize(result)
        self.chars += chars
