"""Sandbox workers for questions answered in parallel: one warm worker per concurrent program.

A `Sandbox` runs one program at a time (its lock serialises callers), so threads sharing the
process-wide one would queue behind each other. The pool lends each `execute` call a sandbox no
other thread is using, creating one when all are busy; workers hold no state between programs, so
any idle one will do. At most as many workers exist as programs ever ran at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from vadar.sandbox.executor import ExecutionResult, Sandbox


class SandboxPool:
    """Lends idle sandboxes to concurrent callers; `close()` stops every worker."""

    def __init__(self, *, timeout_s: float = 30, memory_mb: int = 2048, max_stdout_chars: int = 10_000) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.max_stdout_chars = max_stdout_chars
        self._idle: list[Sandbox] = []
        self._all: list[Sandbox] = []
        self._lock = threading.Lock()
        self._closed = False

    @property
    def size(self) -> int:
        """How many workers the pool has made so far."""
        with self._lock:
            return len(self._all)

    @contextmanager
    def lease(self) -> Iterator[Sandbox]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the sandbox pool is closed")
            sandbox = self._idle.pop() if self._idle else None
            if sandbox is None:
                sandbox = Sandbox(max_stdout_chars=self.max_stdout_chars)
                self._all.append(sandbox)
        try:
            yield sandbox
        finally:
            with self._lock:
                if self._closed:
                    sandbox.close()
                else:
                    self._idle.append(sandbox)

    def execute(self, code: str, namespace: Mapping[str, Any], **limits: Any) -> ExecutionResult:
        """`Sandbox.execute` on an idle worker, with the pool's limits unless given."""
        limits.setdefault("timeout_s", self.timeout_s)
        limits.setdefault("memory_mb", self.memory_mb)
        with self.lease() as sandbox:
            return sandbox.execute(code, namespace, **limits)

    def warm(self, workers: int) -> None:
        """Start up to `workers` workers at once, so the first programs find them ready.

        Meant to run beside the first LLM requests; a caller that arrives before a warm worker is
        ready simply makes its own.
        """
        missing = workers - self.size
        if missing <= 0:
            return

        def start() -> None:
            sandbox = Sandbox(max_stdout_chars=self.max_stdout_chars)
            sandbox.execute("final_result = 0", {}, timeout_s=self.timeout_s, memory_mb=self.memory_mb)
            with self._lock:
                if self._closed:
                    sandbox.close()
                    return
                self._all.append(sandbox)
                self._idle.append(sandbox)

        with ThreadPoolExecutor(max_workers=missing, thread_name_prefix="vadar-warm") as pool:
            list(pool.map(lambda _: start(), range(missing)))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            sandboxes, self._all, self._idle = self._all, [], []
        for sandbox in sandboxes:
            sandbox.close()
