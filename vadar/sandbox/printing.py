"""What a program prints: kept up to a limit, refused past a bound.

RestrictedPython rewrites `print(...)` to `_print._call_print(...)`; the collector here is that
`_print`, one per execution, so a program can neither print without bound nor reach the text of
another run.
"""

from __future__ import annotations

from typing import Any

MAX_PRINTED_CHARS = 1_000_000
"""Most characters one execution may print, kept or not (at least its kept `limit`). Text past the
kept limit is dropped unread, but still made: a helper printing 5 MB per call spent its time on text
nobody reads in every program that called it, and passed its test call. Past this bound the
execution fails (`PrintLimitError`)."""


class PrintLimitError(BaseException):
    """An execution printed more than its bound. Not an `Exception`, so that a program's
    `except Exception` does not swallow it; one that swallows it anyway still fails (the worker
    asks `PrintCollector.flooded` after the run)."""


class PrintCollector:
    """Captures `print` output for one execution, keeping at most `limit` characters and refusing
    more than `MAX_PRINTED_CHARS` in all.

    The transformer rewrites `print(...)` to `_print._call_print(...)` and `printed` to
    `_print()`, so the program only ever holds the bound `_call_print` or the text itself.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._ceiling = max(limit, MAX_PRINTED_CHARS)
        self._parts: list[str] = []
        self._kept = 0
        self.dropped = 0

    @property
    def flooded(self) -> bool:
        """Whether the execution printed past its bound, whatever it did about the error."""
        return self._kept + self.dropped > self._ceiling  # every character printed, kept or not

    def limit_error(self) -> PrintLimitError:
        return PrintLimitError(f"the program printed more than {self._ceiling:,} characters in one run; print "
                               f"less (only the first {self._limit:,} are kept)")

    def __call__(self) -> str:
        return "".join(self._parts)

    def _call_print(self, *objects: Any, sep: str | None = " ", end: str | None = "\n", **_: Any) -> None:
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        if type(sep) is not str or type(end) is not str:
            raise TypeError("sep and end must be strings")
        text = sep.join(str(o) for o in objects) + end
        room = self._limit - self._kept
        if room > 0:
            piece = text[:room]
            self._parts.append(piece)
            self._kept += len(piece)
        self.dropped += len(text) - max(min(room, len(text)), 0)
        if self.flooded:
            raise self.limit_error()

    def text(self) -> str:
        out = "".join(self._parts)
        if self.dropped:
            out += f"\n... [output truncated: {self.dropped} more characters not shown]\n"
        return out
