"""The sandbox worker: a separate, resource-limited interpreter that runs generated programs.

Started by `vadar.sandbox.Sandbox` with `python -I`, it imports only the standard library,
RestrictedPython and the sandbox's own modules, then serves requests over its stdin/stdout
pipes (framed JSON, see `sandbox_codec`). Host functions are proxies that send a `call` message
and block until the host answers, so perception models never load in here.
"""

from __future__ import annotations

import builtins
import dataclasses
import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from vadar.sandbox_codec import (
    CodecError,
    FrameReader,
    ProtocolError,
    decode,
    dumps,
    encode,
    write_all,
    write_frame,
)
from vadar.sandbox_policy import PolicyError, PrintCollector, build_globals, compile_program

try:
    import resource
except ImportError:  # not POSIX: the memory limit is not enforced
    resource = None  # type: ignore[assignment]

PROGRAM_FILE = "<program>"
MAX_SHOWN_FRAMES = 8
_BUILTIN_EXCEPTIONS = {
    name: getattr(builtins, name)
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), Exception)
}


class Lookalikes:
    """Frozen stand-ins for the host's dataclasses, keyed by the host's type key."""

    def __init__(self) -> None:
        self.classes: dict[tuple[str, tuple[str, ...]], type] = {}
        self.keys: dict[type, str] = {}

    def make(self, key: str, values: dict[str, Any]) -> Any:
        names = tuple(values)
        cls = self.classes.get((key, names))
        if cls is None:
            cls = dataclasses.make_dataclass(key.rsplit(".", 1)[-1], list(names), frozen=True)
            self.classes[(key, names)] = cls
            self.keys[cls] = key
        return cls(**values)

    def key(self, cls: type) -> str | None:
        return self.keys.get(cls)


class HostChannel:
    """The worker's end of the host-function protocol."""

    def __init__(self, reader: FrameReader, out_fd: int, lookalikes: Lookalikes) -> None:
        self.reader = reader
        self.out_fd = out_fd
        self.lookalikes = lookalikes
        self.error_classes: dict[str, type[Exception]] = {}

    def proxy(self, name: str) -> Callable[..., Any]:
        def host_function(*args: Any, **kwargs: Any) -> Any:
            return self.call(name, args, kwargs)

        host_function.__name__ = host_function.__qualname__ = name
        return host_function

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            message = {
                "op": "call",
                "name": name,
                "args": encode(list(args), self.lookalikes.key),
                "kwargs": encode(kwargs, self.lookalikes.key),
            }
            frame = dumps(message)
        except CodecError as exc:
            raise TypeError(f"cannot pass this argument to {name}(): {exc}") from None
        write_all(self.out_fd, frame)
        reply = self.reader.read()
        assert reply is not None
        if "error" in reply:
            error = reply["error"]
            raise self._error_class(str(error["type"]))(str(error["message"]))
        return decode(reply["ok"], self.lookalikes.make)

    def _error_class(self, name: str) -> type[Exception]:
        """The host's exception type when it is a builtin, else a same-named Exception subclass."""
        if name in _BUILTIN_EXCEPTIONS:
            return _BUILTIN_EXCEPTIONS[name]
        if name not in self.error_classes:
            self.error_classes[name] = type(name, (Exception,), {})
        return self.error_classes[name]


def _line(sources: dict[str, tuple[str, list[str]]], filename: str, lineno: int | None) -> str:
    label, lines = sources[filename]
    text = lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""
    where = f"line {lineno}" if label == "" else f"in {label}, line {lineno}"
    return f"{where}: {text}" if text else where


MAX_MESSAGE_CHARS = 2000
"""Exception messages are cut to this length; the LLM reads them."""


def _exception_line(exc: BaseException) -> str:
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide the error
        message = ""
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + f"... [{len(message) - MAX_MESSAGE_CHARS} more characters]"
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def format_error(exc: BaseException, sources: dict[str, tuple[str, list[str]]]) -> str:
    """Program-level traceback: one line per program/library frame, repeats collapsed."""
    if isinstance(exc, SyntaxError) and exc.filename in sources:
        return f"{_line(sources, exc.filename, exc.lineno)}\nSyntaxError: {exc.msg}"
    frames: list[str] = []
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in sources:
            frames.append(_line(sources, filename, tb.tb_lineno))
        tb = tb.tb_next
    collapsed: list[str] = []
    count = 0
    for i, frame in enumerate(frames):
        count += 1
        if i + 1 < len(frames) and frames[i + 1] == frame:
            continue
        collapsed.append(frame if count == 1 else f"{frame}   [repeated {count} times]")
        count = 0
    if len(collapsed) > MAX_SHOWN_FRAMES:
        hidden = len(collapsed) - MAX_SHOWN_FRAMES
        collapsed = collapsed[:3] + [f"... {hidden} more calls ..."] + collapsed[-(MAX_SHOWN_FRAMES - 3) :]
    return "\n".join([*collapsed, _exception_line(exc)])


def _set_memory_limit(megabytes: int | None) -> None:
    if resource is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = resource.RLIM_INFINITY if megabytes is None else megabytes * 1024 * 1024
    if hard != resource.RLIM_INFINITY and (soft == resource.RLIM_INFINITY or soft > hard):
        soft = hard
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


RESERVE_BYTES = 16 * 1024 * 1024
"""Address space held back while a program runs and released the moment it fails, so that the
worker can still unwind and report after the program used up its memory limit."""


def _guarded(step: Callable[[], Any], reserve: list[bytearray]) -> tuple[Any, BaseException | None]:
    """Run `step`, returning (value, None) or (None, exception).

    Kept tiny on purpose: CPython 3.11 allocates an int for the handler's instruction offset
    when entering an `except` block at offset > 256, and with no memory left that allocation
    fails forever. Here the offset is small and the reserve is released first thing.
    """
    try:
        return step(), None
    except BaseException as exc:  # noqa: BLE001 - the program may raise anything, SystemExit too
        reserve.clear()
        return None, exc


def run_program(request: dict[str, Any], channel: HostChannel) -> dict[str, Any]:
    """Compile and run one program; every program failure becomes the `error` text."""
    memory_mb = int(request["memory_mb"])
    stdout = PrintCollector(int(request["stdout_limit"]))
    sources: dict[str, tuple[str, list[str]]] = {PROGRAM_FILE: ("", request["code"].splitlines())}
    namespace: dict[str, Any] = {}

    def step() -> tuple[bool, Any]:
        namespace.update(build_globals(stdout))
        for name, tree in request["globals"]:
            namespace[name] = decode(tree, channel.lookalikes.make)
        for name in request["hosts"]:
            namespace[name] = channel.proxy(name)
        for name, source in request["library"]:
            filename = f"<library {name}>"
            sources[filename] = (name, source.splitlines())
            exec(compile_program(source, filename), namespace)  # noqa: S102 - restricted code
        exec(compile_program(request["code"], PROGRAM_FILE), namespace)  # noqa: S102
        if "final_result" not in namespace:
            return False, None
        try:
            return True, encode(namespace["final_result"], channel.lookalikes.key)
        except CodecError as exc:
            raise ResultError(f"final_result cannot be returned: {exc}") from None

    reserve = [bytearray(RESERVE_BYTES)]
    _set_memory_limit(memory_mb)
    outcome, exc = _guarded(step, reserve)
    _set_memory_limit(None)
    del reserve
    reply: dict[str, Any] = {"op": "done", "has_final_result": False, "value": None, "error": None}
    reply["memory_exceeded"] = isinstance(exc, MemoryError)
    if exc is None:
        reply["has_final_result"], reply["value"] = outcome
    elif isinstance(exc, PolicyError):
        reply["error"] = f"{_line(sources, exc.filename, exc.lineno)}\nNotAllowed: {exc.message}"
    elif isinstance(exc, ResultError):
        reply["error"] = str(exc)
    else:
        if isinstance(exc, MemoryError):
            exc.args = (f"program exceeded the {memory_mb} MB memory limit",)
        reply["error"] = format_error(exc, sources)
    exc = None
    namespace.clear()
    reply["stdout"] = stdout.text()
    reply["stdout_truncated"] = stdout.dropped > 0
    return reply


class ResultError(Exception):
    """`final_result` holds something that cannot leave the worker."""


def _watch_parent(parent: int) -> None:
    """Exit when the host process goes away, even if a program is spinning."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(1)


def main() -> None:
    in_fd, out_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)  # stray writes to stdout must not corrupt the protocol
    sys.stdout = sys.stderr
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    threading.stack_size(256 * 1024)  # the watchdog needs little; keep the address space for programs
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    reader = FrameReader(in_fd)
    channel = HostChannel(reader, out_fd, Lookalikes())
    write_frame(out_fd, {"op": "ready", "pid": os.getpid()})
    while True:
        try:
            request = reader.read()
        except ProtocolError:  # the host closed the pipe
            return
        if request is None or request.get("op") != "run":
            return
        try:
            reply = run_program(request, channel)
        except MemoryError:
            reply = {"op": "done", "has_final_result": False, "value": None, "memory_exceeded": True}
            reply["error"] = f"MemoryError: program exceeded the {request['memory_mb']} MB memory limit"
            reply["stdout"] = ""
        gc.collect()
        try:
            write_frame(out_fd, reply)
        except CodecError as exc:
            reply.update(value=None, error=f"final_result cannot be returned: {exc}")
            write_frame(out_fd, reply)


if __name__ == "__main__":
    main()
