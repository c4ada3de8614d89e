"""A bounded, continuously drained buffer for the sandbox worker's stderr.

The worker's stderr used to go to a temporary file that grew for as long as the worker was
reused (1.9 GB in 3.5 s from cleanup code raising in a loop) and was read whole after a crash.
Now a thread reads the pipe as the worker writes, keeps only the last `keep` bytes, and counts
the rest; past `recycle_after` bytes the sandbox replaces the worker after the current program.
"""

from __future__ import annotations

import os
import threading

KEEP_BYTES = 16 * 1024
RECYCLE_AFTER_BYTES = 1024 * 1024


class StderrBuffer:
    """Drains one pipe file descriptor in a daemon thread into a bounded tail."""

    def __init__(self, fd: int, *, keep: int = KEEP_BYTES, recycle_after: int = RECYCLE_AFTER_BYTES) -> None:
        self.fd = fd
        self.keep = keep
        self.recycle_after = recycle_after
        self.total = 0
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="sandbox-stderr", daemon=True)
        self._thread.start()

    @property
    def full(self) -> bool:
        """The worker wrote more than it should ever need to: replace it."""
        return self.total > self.recycle_after

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            with self._lock:
                self.total += len(chunk)
                self._tail += chunk
                if len(self._tail) > self.keep:
                    del self._tail[: len(self._tail) - self.keep]
        try:
            os.close(self.fd)
        except OSError:
            pass

    def tail(self, limit: int = 2000, *, wait_s: float = 0.0) -> str:
        """The last `limit` characters written, after waiting up to `wait_s` for the pipe to close."""
        if wait_s:
            self._thread.join(wait_s)
        with self._lock:
            text = bytes(self._tail).decode("utf-8", "replace")
        return text[-limit:].strip()
