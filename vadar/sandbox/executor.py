"""Run generated programs in a restricted, resource-limited worker process.

`execute(code, namespace)` is the one entry point the rest of vadar uses. Programs are compiled
with RestrictedPython under `policy` and run in a separate interpreter (`worker`)
with an address-space limit, while this process enforces the wall-clock limit and runs the host
functions (perception modules) the program calls. See docs/sandbox.md for the design.
"""

from __future__ import annotations

import atexit
import dataclasses
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vadar.sandbox.calls import CallLog, HostCall
from vadar.sandbox.codec import CodecError, DecodeTimeout, ProtocolError, decode, dumps, encode
from vadar.sandbox.crash import crash_line, signal_name
from vadar.sandbox.policy import RESERVED_NAME as _RESERVED
from vadar.sandbox.process import WorkerProcess
from vadar.text import clip, utf8_safe

__all__ = ["ExecutionResult", "HostCall", "LibraryFunction", "Sandbox", "execute"]

DEFAULT_STDOUT_CHARS = 10_000


@dataclass(frozen=True)
class LibraryFunction:
    """A generated helper (`def _name(...): ...`), compiled under the same policy as programs."""

    name: str
    source: str


@dataclass
class ExecutionResult:
    """What running one program produced; `error` is written for the LLM to read."""

    value: Any = None
    has_final_result: bool = False
    stdout: str = ""
    error: str | None = None
    infrastructure_error: str | None = None
    duration_s: float = 0.0
    calls: list[HostCall] = field(default_factory=list)
    timed_out: bool = False
    memory_exceeded: bool = False
    stdout_truncated: bool = False
    crashed: bool = False
    calls_dropped: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None and self.infrastructure_error is None


def _to_plain(value: Any) -> Any:
    """numpy scalars and arrays become Python numbers and lists (without importing numpy)."""
    module = type(value).__module__
    if module == "numpy" or module.startswith("numpy."):
        tolist = getattr(value, "tolist", None)
        if tolist is not None:
            return tolist()
    return value


class _Registry:
    """The dataclass types this execution may send and receive, keyed by qualified name."""

    def __init__(self) -> None:
        self.types: dict[str, type] = {}

    def key(self, cls: type) -> str:
        name = f"{cls.__module__}.{cls.__qualname__}"
        self.types.setdefault(name, cls)
        return name

    def make(self, key: str, values: dict[str, Any]) -> Any:
        cls = self.types.get(key)
        if cls is None:
            raise CodecError(f"unknown dataclass {key!r}")
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        if set(values) != names:
            raise CodecError(f"fields of {key!r} do not match")
        return cls(**values)


class Sandbox:
    """Runs programs one at a time in a reusable worker, respawned after kills and crashes."""

    def __init__(self, *, max_stdout_chars: int = DEFAULT_STDOUT_CHARS) -> None:
        self.max_stdout_chars = max_stdout_chars
        self._worker: WorkerProcess | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.close()
                self._worker = None

    def execute(
        self,
        code: str,
        namespace: Mapping[str, Any],
        *,
        timeout_s: float = 30,
        memory_mb: int = 2048,
        max_stdout_chars: int | None = None,
    ) -> ExecutionResult:
        """Run `code` with `namespace`; never raises for anything the program does.

        Raises `ValueError` for a limit that is not positive: it would remove the memory limit
        or time every program out.
        """
        if not (timeout_s > 0 and memory_mb > 0) or timeout_s != timeout_s:
            raise ValueError(f"sandbox limits must be positive, got timeout_s={timeout_s!r}, memory_mb={memory_mb!r}")
        started = time.monotonic()
        registry = _Registry()
        request = _build_request(code, namespace, registry)
        request["memory_mb"] = int(memory_mb)
        stdout_limit = self.max_stdout_chars if max_stdout_chars is None else max_stdout_chars
        request["stdout_limit"] = stdout_limit
        try:
            frame = dumps(request)
        except CodecError as exc:  # e.g. generated source holding a lone surrogate
            result = ExecutionResult(error=f"the program cannot be run: its text {exc}")
        else:
            with self._lock:
                result = self._run(frame, code, namespace, registry, timeout_s, memory_mb)
        result.error = None if result.error is None else utf8_safe(clip(result.error, MAX_ERROR_CHARS))
        result.stdout = utf8_safe(clip(result.stdout, stdout_limit + 200))
        result.duration_s = time.monotonic() - started
        return result

    def _start(self) -> WorkerProcess:
        if self._worker is None or not self._worker.alive():
            self._discard_worker()
            self._worker = WorkerProcess()
        return self._worker

    def _run(
        self,
        frame: bytes,
        code: str,
        namespace: Mapping[str, Any],
        registry: _Registry,
        timeout_s: float,
        memory_mb: int,
    ) -> ExecutionResult:
        result = ExecutionResult()
        try:
            worker = self._start()
        except (ProtocolError, OSError) as exc:  # the machinery itself: nothing the program did
            self._discard_worker()
            result.infrastructure_error = f"sandbox worker failed: {exc}"
            return result
        log = CallLog(result.calls)
        try:
            deadline = time.monotonic() + timeout_s  # starting a worker is not the program's time
            worker.send(frame)
            while True:
                message = worker.reader.read(deadline)
                if message is None or time.monotonic() > deadline:
                    self._discard_worker()
                    result.timed_out = True
                    result.error = f"TimeoutError: program exceeded the {timeout_s:g} s time limit"
                    return result
                if message.get("op") == "call":
                    worker.send(_serve_call(message, namespace, registry, log, deadline))
                elif message.get("op") == "done":
                    _fill_result(result, message, registry, deadline)
                    if result.memory_exceeded or message.get("recycle") or worker.stderr.full:
                        self._discard_worker()  # start the next program with a fresh worker
                    return result
                else:
                    raise ProtocolError(f"unexpected message {message.get('op')!r}")
        except DecodeTimeout:  # decoding what the program sent counts against its time limit
            self._discard_worker()
            result.value, result.has_final_result, result.timed_out = None, False, True
            result.error = f"TimeoutError: program exceeded the {timeout_s:g} s time limit"
            return result
        except (ProtocolError, CodecError, OSError) as exc:
            self._report_crash(result, exc, code, namespace, memory_mb)
            return result
        except BaseException:
            self._discard_worker()  # out of sync with the worker now (e.g. KeyboardInterrupt)
            raise
        finally:
            result.calls_dropped = log.dropped

    def _report_crash(
        self, result: ExecutionResult, exc: Exception, code: str, namespace: Mapping[str, Any], memory_mb: int
    ) -> None:
        """The worker died or broke the protocol while running this program: the program's error."""
        crashed = self._worker
        returncode = None
        tail = ""
        if crashed is not None:
            try:
                returncode = crashed.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
            self._discard_worker()
            tail = crashed.stderr.tail(wait_s=1.0)
        if "MemoryError" in tail or "Cannot allocate memory" in tail or "out of memory" in tail:
            result.memory_exceeded = True
            result.error = f"MemoryError: program exceeded the {memory_mb} MB memory limit"
            return
        result.crashed = True
        where = crash_line(tail, code, _library_sources(namespace))
        if returncode is not None and returncode < 0:
            name = signal_name(-returncode)
            what = (f"SandboxCrash: the program crashed the Python interpreter ({name}); data or chains "
                    "of iterators nested thousands of levels deep do this")
        else:
            what = f"SandboxCrash: the sandbox worker stopped unexpectedly ({exc})"
        result.error = f"{where}\n{what}" if where else what

    def _discard_worker(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None


MAX_ERROR_CHARS = 5000
"""Error text accepted from the worker (which cuts its own at 4,000 characters)."""

def _library_sources(namespace: Mapping[str, Any]) -> dict[str, str]:
    return {name: value.source for name, value in namespace.items() if isinstance(value, LibraryFunction)}


def _build_request(code: str, namespace: Mapping[str, Any], registry: _Registry) -> dict[str, Any]:
    """Split the namespace into plain globals, host functions and library functions."""
    plain: list[list[Any]] = []
    hosts: list[str] = []
    library: list[list[str]] = []
    for name, value in namespace.items():
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("__") or _RESERVED.match(name):
            raise ValueError(f"namespace name {name!r} is not allowed in the sandbox")
        if isinstance(value, LibraryFunction):
            if value.name != name:
                raise ValueError(f"library function {value.name!r} is stored under the name {name!r}")
            library.append([value.name, value.source])
        elif callable(value):
            hosts.append(name)
        else:
            try:
                plain.append([name, encode(value, registry.key, convert=_to_plain)])
            except CodecError as exc:
                raise TypeError(f"namespace value {name!r} cannot enter the sandbox: {exc}") from None
    return {"op": "run", "code": code, "globals": plain, "hosts": hosts, "library": library}


def _serve_call(
    message: dict[str, Any], namespace: Mapping[str, Any], registry: _Registry, log: CallLog,
    deadline: float | None = None,
) -> bytes:
    """Run one host function for the program; its exceptions go back to the program."""
    name = message.get("name")
    function = namespace.get(name) if isinstance(name, str) else None
    if function is None or not callable(function) or isinstance(function, LibraryFunction):
        raise ProtocolError(f"worker asked for unknown host function {name!r}")
    args = decode(message.get("args"), registry.make, deadline=deadline)
    kwargs = decode(message.get("kwargs"), registry.make, deadline=deadline)
    if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
        raise ProtocolError("malformed host call")
    call = log.start(name, args, kwargs)
    started = time.perf_counter()
    try:
        value = function(*args, **kwargs)
        del args, kwargs
        log.finish(call, _plain_copy(value))
        reply = dumps({"op": "reply", "ok": encode(value, registry.key, convert=_to_plain)})
    except Exception as exc:  # noqa: BLE001 - any module failure is the program's to handle
        message_text = str(exc) if not isinstance(exc, CodecError) else f"{name}() returned {exc}"
        kind = type(exc).__name__ if not isinstance(exc, CodecError) else "TypeError"
        message_text = utf8_safe(clip(message_text, 2000))
        call.error = f"{kind}: {message_text}"
        reply = dumps({"op": "reply", "error": {"type": kind, "message": message_text}})
    call.seconds = time.perf_counter() - started
    return reply


def _plain_copy(value: Any) -> Any:
    """The value as the program sees it (numpy converted), for the call trace."""
    try:
        return decode(encode(value, lambda cls: None, convert=_to_plain), lambda k, v: None)
    except CodecError:
        return value


def _fill_result(
    result: ExecutionResult, message: dict[str, Any], registry: _Registry, deadline: float | None = None
) -> None:
    result.has_final_result = bool(message.get("has_final_result"))
    result.value = decode(message.get("value"), registry.make, deadline=deadline)
    result.stdout = str(message.get("stdout", ""))
    result.stdout_truncated = bool(message.get("stdout_truncated"))
    result.memory_exceeded = bool(message.get("memory_exceeded"))
    error = message.get("error")
    result.error = None if error is None else str(error)


_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """The process-wide sandbox behind `execute`, created on first use and closed at exit."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
            atexit.register(_default.close)
        return _default


def execute(
    code: str,
    namespace: Mapping[str, Any],
    *,
    timeout_s: float = 30,
    memory_mb: int = 2048,
    max_stdout_chars: int | None = None,
) -> ExecutionResult:
    """Run a generated program in the default sandbox; see `Sandbox.execute`."""
    return default_sandbox().execute(
        code, namespace, timeout_s=timeout_s, memory_mb=memory_mb, max_stdout_chars=max_stdout_chars
    )
