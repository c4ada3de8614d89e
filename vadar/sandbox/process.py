"""One sandbox worker process: started isolated (`python -I`, a bare environment, its own session), spoken to over pipes, killed with its process group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vadar.sandbox.codec import FrameReader, ProtocolError, dumps, write_all
from vadar.sandbox.stderr import StderrBuffer

STARTUP_TIMEOUT_S = 60.0
"""A worker imports numpy and the sandbox before it is ready; on a 2-core machine whose cores run
two LLM servers and Ray workers, that took over 20 s. A worker that never starts is still caught."""
_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = f"import sys; sys.path.insert(0, {_ROOT!r}); from vadar.sandbox.worker import main; main()"


def _worker_environment() -> dict[str, str]:
    """A minimal environment: no API keys or other secrets of the host reach the worker.

    One malloc arena keeps the reserved (not used) address space small, so that `memory_mb`
    measures what programs allocate.
    """
    env = {"MALLOC_ARENA_MAX": "1", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
    if "PATH" in os.environ:
        env["PATH"] = os.environ["PATH"]
    return env


class WorkerProcess:
    """One live worker process and the pipes to it."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=write_fd,
                cwd=tempfile.gettempdir(),
                env=_worker_environment(),
                start_new_session=True,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self.stderr = StderrBuffer(read_fd)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.in_fd = self.process.stdin.fileno()
        self.reader = FrameReader(self.process.stdout.fileno())
        try:
            ready = self.reader.read(time.monotonic() + STARTUP_TIMEOUT_S)
        except ProtocolError:
            ready = None
        if ready is None or ready.get("op") != "ready":
            self.kill()
            tail = self.stderr.tail(wait_s=1.0) or "no output"
            raise ProtocolError(f"worker did not start: {tail}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, frame: bytes) -> None:
        try:
            write_all(self.in_fd, frame)
        except (BrokenPipeError, OSError) as exc:
            raise ProtocolError(f"worker pipe closed: {exc}") from None

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def close(self) -> None:
        """Ask politely, then kill."""
        if self.process.poll() is None:
            try:
                self.send(dumps({"op": "exit"}))
                self.process.wait(timeout=2)
            except (ProtocolError, subprocess.TimeoutExpired):
                pass
        self.kill()
