"""Holding a call's total deadline against an endpoint that keeps the connection busy."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class DeadlineCloser:
    """Closes the open response when the call's deadline passes, from a timer thread: a body
    that keeps trickling (SSE comments, whitespace) never trips the per-read timeout."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self.reply: Any = None  # what had arrived, for the timeout's message
        self._close: Callable[[], None] | None = None
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, close: Callable[[], None]) -> None:
        self._close = close
        if self.fired:
            close()

    def _fire(self) -> None:
        self.fired = True
        if self._close is not None:
            try:
                self._close()
            except Exception:  # noqa: BLE001 - closing races with the reader; it stops either way
                pass

    def cancel(self) -> None:
        self._timer.cancel()
