"""The sandbox worker: a separate, resource-limited interpreter that runs generated programs.

Started by `vadar.sandbox.Sandbox` with `python -I`, it imports only the standard library,
RestrictedPython and the sandbox's own modules, then serves requests over its stdin/stdout
pipes (framed JSON, see `codec`). Host functions are proxies that send a `call` message
and block until the host answers, so perception models never load in here.
"""

from __future__ import annotations

import builtins
import dataclasses
import dis
import faulthandler
import gc
import io
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from vadar.sandbox.codec import (
    MAX_CALL_BYTES,
    MAX_VALUE_BYTES,
    CodecError,
    FrameReader,
    ProtocolError,
    decode,
    dumps,
    encode,
    write_all,
    write_frame,
)
from vadar.sandbox.errors import MAX_MESSAGE_CHARS, format_error, source_line
from vadar.sandbox.library_source import LibrarySourceError, check_library_source
from vadar.sandbox.policy import PolicyError, build_globals, compile_program
from vadar.sandbox.printing import PrintCollector, PrintLimitError
from vadar.text import clip, utf8_safe

try:
    import resource
except ImportError:  # not POSIX: the memory limit is not enforced
    resource = None  # type: ignore[assignment]

PROGRAM_FILE = "<program>"
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
            both = encode([list(args), kwargs], self.lookalikes.key, max_bytes=MAX_CALL_BYTES)
            frame = dumps({"op": "call", "name": name, "args": both["L"][0], "kwargs": both["L"][1]})
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


MAX_ERROR_CHARS = 4000
"""The whole error text is cut to this length."""


def run_program(request: dict[str, Any], channel: HostChannel) -> bytes:
    """Compile and run one program; return the `done` frame to send.

    The memory limit holds from decoding the program's globals to serialising the reply: the
    program, its cleanup code (generator `finally` blocks run when its namespace is cleared),
    error formatting and the encoding of `final_result` all run under it. Only writing the
    finished frame happens after the limit is lifted.
    """
    memory_mb = int(request["memory_mb"])
    stdout = PrintCollector(int(request["stdout_limit"]))
    sources: dict[str, tuple[str, list[str]]] = {PROGRAM_FILE: ("", request["code"].splitlines())}
    namespace: dict[str, Any] = {}

    def step() -> tuple[bool, Any]:
        namespace.update(build_globals(stdout))
        for name, source in request["library"]:
            filename = f"<library {name}>"
            sources[filename] = (name, source.splitlines())
            code = compile_program(source, filename)
            try:
                check_library_source(name, source)
            except LibrarySourceError as exc:
                raise PolicyError(filename, exc.lineno, exc.message) from None
            exec(code, namespace)  # noqa: S102 - restricted code
        # Bound after the helpers, so that nothing a helper's definition did can stand in for them.
        namespace.pop("final_result", None)
        for name, tree in request["globals"]:
            namespace[name] = decode(tree, channel.lookalikes.make)
        for name in request["hosts"]:
            namespace[name] = channel.proxy(name)
        exec(compile_program(request["code"], PROGRAM_FILE), namespace)  # noqa: S102
        if "final_result" not in namespace:
            return False, None
        try:
            return True, encode(namespace["final_result"], channel.lookalikes.key, max_bytes=MAX_VALUE_BYTES)
        except CodecError as exc:
            raise ResultError(f"final_result cannot be returned: {exc}") from None

    def finish() -> bytes:
        nonlocal outcome, exc
        reply = _reply(outcome, exc, sources, memory_mb)
        outcome = exc = None  # frees the traceback's frames: their generators' cleanup runs now
        return _cleanup_and_dump(reply, namespace, stdout)

    fallback = dumps(_memory_reply(memory_mb))
    reserve = [bytearray(RESERVE_BYTES)]
    _set_memory_limit(memory_mb)
    outcome, exc = _guarded(step, reserve)
    if stdout.flooded and not isinstance(exc, PrintLimitError):  # the program caught it and went on
        outcome, exc = None, stdout.limit_error()
    frame = _guarded(finish, reserve)[0]  # a failure to report is dropped at once, with its frames
    exc = None
    _set_memory_limit(None)
    return fallback if frame is None else frame


def _memory_reply(memory_mb: int) -> dict[str, Any]:
    """What the host is told when even reporting ran out of memory (the worker is replaced)."""
    return {
        "op": "done", "has_final_result": False, "value": None, "memory_exceeded": True,
        "error": f"MemoryError: program exceeded the {memory_mb} MB memory limit",
        "stdout": "", "stdout_truncated": False, "recycle": True,
    }


_RAISE_VARARGS = dis.opmap["RAISE_VARARGS"]


def _raised_by_statement(exc: BaseException) -> bool:
    """Whether the innermost frame raised `exc` with a `raise` statement (not an allocation)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE_VARARGS


def _reply(
    outcome: Any, exc: BaseException | None, sources: dict[str, tuple[str, list[str]]], memory_mb: int
) -> dict[str, Any]:
    reply: dict[str, Any] = {"op": "done", "has_final_result": False, "value": None, "error": None}
    reply["memory_exceeded"] = isinstance(exc, MemoryError) and not _raised_by_statement(exc)
    if exc is None:
        reply["has_final_result"], reply["value"] = outcome
        return reply
    if isinstance(exc, PolicyError):
        error = f"{source_line(sources, exc.filename, exc.lineno)}\nNotAllowed: {clip(exc.message, MAX_MESSAGE_CHARS)}"
    elif isinstance(exc, ResultError):
        error = str(exc)
    else:
        if reply["memory_exceeded"]:
            exc.args = (f"program exceeded the {memory_mb} MB memory limit",)
        error = format_error(exc, sources)
    reply["error"] = utf8_safe(clip(error, MAX_ERROR_CHARS))
    return reply


def _cleanup_and_dump(reply: dict[str, Any], namespace: dict[str, Any], stdout: PrintCollector) -> bytes:
    """Drop everything the program made (running its cleanup code), then serialise the reply."""
    namespace.clear()
    gc.collect()
    reply["stdout"] = utf8_safe(stdout.text())
    reply["stdout_truncated"] = stdout.dropped > 0
    reply["recycle"] = _STDERR.full
    try:
        return dumps(reply)
    except CodecError as exc:
        reply.update(has_final_result=False, value=None, error=f"final_result cannot be returned: {exc}")
        return dumps(reply)


class ResultError(Exception):
    """`final_result` holds something that cannot leave the worker."""


def _watch_parent(parent: int) -> None:
    """Exit when the host process goes away, even if a program is spinning."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(1)


class BoundedStream(io.TextIOBase):
    """The worker's `sys.stderr`: passes at most `limit` characters to fd 2, then drops the rest.

    Cleanup code that raises in a loop would otherwise write gigabytes; once full, the worker
    asks the host to replace it after the current program.
    """

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.left = limit
        self.full = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.left > 0:
            piece = text[: self.left]
            self.left -= len(piece)
            try:
                write_all(self.fd, piece.encode("utf-8", "backslashreplace"))
            except OSError:
                pass
        if self.left <= 0:
            self.full = True
        return len(text)


STDERR_LIMIT_CHARS = 64 * 1024
_STDERR = BoundedStream(2, STDERR_LIMIT_CHARS)


def _ignore_unraisable(unraisable: Any) -> None:
    """Errors in finalizers (a generator's `finally` raising) are dropped, not printed: the
    default hook would format program-controlled messages of any size, over and over."""


def main() -> None:
    in_fd, out_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)  # stray writes to stdout must not corrupt the protocol
    sys.stdout = sys.stderr = _STDERR
    sys.unraisablehook = _ignore_unraisable
    faulthandler.enable(file=sys.__stderr__)  # a crash leaves the program's line for the host
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
        write_all(out_fd, run_program(request, channel))


if __name__ == "__main__":
    main()
