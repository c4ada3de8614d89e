"""Plain-data encoding and message framing shared by the sandbox host and its worker.

Everything that crosses the process boundary is turned into a JSON tree with a few tags, so
neither side ever unpickles bytes: the host decodes what the untrusted worker sends without
running any code chosen by the worker. Dataclass instances travel as (type key, fields); each
side decides how to rebuild them (the host only for types it registered itself).
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import struct
import time
from collections import deque
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting of containers accepted in either direction."""

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""Largest frame either side accepts; anything bigger is a protocol error."""

MAX_VALUE_BYTES = 16 * 1024 * 1024
"""Largest encoded `final_result` a program may return."""

MAX_CALL_BYTES = 4 * 1024 * 1024
"""Largest encoded arguments of one host-function call."""

_HEADER = struct.Struct(">I")

Scalar = (type(None), bool, int, float, str)


_SEQUENCE_TAGS: tuple[tuple[type, str], ...] = (
    (list, "L"), (tuple, "T"), (set, "S"), (frozenset, "F"), (deque, "L"),
)


class CodecError(ValueError):
    """A value cannot be encoded, or an encoded tree is malformed."""


class ProtocolError(RuntimeError):
    """The other side broke the framing or closed the pipe."""


def encode(
    value: Any,
    dataclass_key: Callable[[type], str | None],
    *,
    convert: Callable[[Any], Any] | None = None,
    max_bytes: int | None = None,
) -> Any:
    """Turn plain data into a JSON-able tree.

    `dataclass_key` names a dataclass type (None refuses it); `convert` may first replace
    foreign values (numpy scalars and arrays on the host side) with plain ones. With `max_bytes`
    the walk stops with a `CodecError` as soon as the JSON would exceed it, so a small object
    that stands for a huge one (a list repeating one big list) is refused early and cheaply.
    """
    size = _Size(max_bytes if max_bytes is not None else 1 << 62)
    return _encode(value, dataclass_key, convert, size, 0)


class _Size:
    """Approximate JSON size of what was encoded so far, against a limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def add(self, amount: int) -> None:
        self.used += amount
        if self.used > self.limit:
            raise CodecError(f"too large to send (more than {_megabytes(self.limit)} encoded)")


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.0f} MB" if size >= 2**20 else f"{size} bytes"


def _encode(
    value: Any,
    dataclass_key: Callable[[type], str | None],
    convert: Callable[[Any], Any] | None,
    size: _Size,
    depth: int,
) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError(f"value is nested more than {MAX_DEPTH} levels deep")
    if convert is not None:
        value = convert(value)
    kind = type(value)
    if kind is str:
        size.add(len(value) + 2)
        return value
    if kind in Scalar:
        size.add(8)
        return value
    for base in (bool, int, float, str):  # IntEnum, str-valued enums and the like
        if isinstance(value, base):
            plain = _exact(base, value)
            size.add(len(plain) + 2 if base is str else 8)
            return plain
    nested = depth + 1
    for base, tag in _SEQUENCE_TAGS:  # subclasses (NamedTuple, deque) travel as their base
        if isinstance(value, base):
            size.add(8)
            return {tag: [_encode(v, dataclass_key, convert, size, nested) for v in value]}
    if isinstance(value, dict):  # Counter, defaultdict and OrderedDict arrive as plain dicts
        size.add(8)
        return {
            "D": [
                [
                    _encode(k, dataclass_key, convert, size, nested),
                    _encode(v, dataclass_key, convert, size, nested),
                ]
                for k, v in dict.items(value)
            ]
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        key = dataclass_key(kind)
        if key is not None:
            size.add(len(key) + 16)
            fields = [
                [f.name, _encode(getattr(value, f.name), dataclass_key, convert, size, nested)]
                for f in dataclasses.fields(value)
                if f.init
            ]
            return {"C": key, "f": fields}
    raise CodecError(f"a value of type {kind.__name__} is not plain data")


def _exact(base: type, value: Any) -> Any:
    """The plain builtin value inside an instance of a subclass of bool/int/float/str."""
    if base is str:
        return str.__str__(value)
    if base is float:
        return float.__float__(value)
    return int.__int__(value) if base is int else bool(value)


class DecodeTimeout(CodecError):
    """Decoding ran past its deadline (a set of values sharing one hash costs O(n^2))."""


_CHECK_EVERY = 32
"""Set members and dict keys inserted between two looks at the clock."""


def decode(
    tree: Any,
    make_dataclass: Callable[[str, dict[str, Any]], Any],
    *,
    depth: int = 0,
    deadline: float | None = None,
) -> Any:
    """Rebuild a value from `encode`'s tree; never executes anything but `make_dataclass`.

    With `deadline` (a `time.monotonic()` value), raises `DecodeTimeout` once it passes: sets and
    dicts are filled one member at a time and the clock is read every few members, because
    inserting values that share one hash (`k * (2**61 - 1)`) costs time quadratic in their number.
    """
    if depth > MAX_DEPTH + 2:
        raise CodecError("encoded value is nested too deeply")
    kind = type(tree)
    if kind in Scalar:
        return tree
    if kind is not dict or len(tree) not in (1, 2):
        raise CodecError(f"malformed encoded value of type {kind.__name__}")
    if deadline is not None and time.monotonic() > deadline:
        raise DecodeTimeout("decoding exceeded the time limit")
    nested = depth + 1

    def inner(value: Any) -> Any:
        return decode(value, make_dataclass, depth=nested, deadline=deadline)

    if "C" in tree:
        key, fields = tree["C"], tree.get("f")
        if type(key) is not str or type(fields) is not list:
            raise CodecError("malformed dataclass entry")
        values: dict[str, Any] = {}
        for pair in fields:
            if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                raise CodecError("malformed dataclass field")
            values[pair[0]] = inner(pair[1])
        return make_dataclass(key, values)
    (tag, items), = tree.items()
    if type(items) is not list:
        raise CodecError("malformed container entry")
    if tag == "D":
        out: dict[Any, Any] = {}
        for count, pair in enumerate(items):
            if type(pair) is not list or len(pair) != 2:
                raise CodecError("malformed dict entry")
            _check_clock(count, deadline)
            try:
                out[inner(pair[0])] = inner(pair[1])
            except TypeError as exc:  # unhashable key
                raise CodecError(str(exc)) from None
        return out
    if tag in ("L", "T"):
        members = [inner(v) for v in items]
        return members if tag == "L" else tuple(members)
    if tag not in ("S", "F"):
        raise CodecError(f"unknown tag {tag!r}")
    collected: set[Any] = set()
    for count, item in enumerate(items):
        _check_clock(count, deadline)
        try:
            collected.add(inner(item))
        except TypeError as exc:  # unhashable set member
            raise CodecError(str(exc)) from None
    return collected if tag == "S" else frozenset(collected)


def _check_clock(count: int, deadline: float | None) -> None:
    if deadline is not None and count % _CHECK_EVERY == 0 and time.monotonic() > deadline:
        raise DecodeTimeout("decoding exceeded the time limit")


def dumps(message: dict[str, Any]) -> bytes:
    """Serialise one message (already encoded) to a length-prefixed frame."""
    try:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    except (ValueError, RecursionError) as exc:  # e.g. an int beyond Python's str() digit limit
        raise CodecError(f"cannot be sent: {exc}") from None
    if len(text) > MAX_MESSAGE_BYTES:  # checked before encoding: UTF-8 is never shorter
        raise CodecError(f"too large to send ({_megabytes(len(text))} encoded, the limit is "
                         f"{_megabytes(MAX_MESSAGE_BYTES)})")
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise CodecError(f"holds text that is not valid Unicode (a lone surrogate such as {bad!r})") from None
    del text
    if len(body) > MAX_MESSAGE_BYTES:
        raise CodecError(f"too large to send ({_megabytes(len(body))} encoded, the limit is "
                         f"{_megabytes(MAX_MESSAGE_BYTES)})")
    return _HEADER.pack(len(body)) + body


def write_frame(fd: int, message: dict[str, Any]) -> None:
    """Serialise and write one message (blocking)."""
    write_all(fd, dumps(message))


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to a file descriptor (blocking)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class FrameReader:
    """Reads length-prefixed frames from a pipe, optionally against a deadline.

    Frames are parsed with `json.loads` only; a peer that sends garbage gets a ProtocolError.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()

    def read(self, deadline: float | None = None) -> dict[str, Any] | None:
        """Next message, or None if `deadline` (a `time.monotonic()` value) passed first."""
        need = _HEADER.size
        while True:
            if len(self._buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self._buffer)
                if size > MAX_MESSAGE_BYTES:
                    raise ProtocolError(f"peer announced a {size}-byte message")
                need = _HEADER.size + size
                if len(self._buffer) >= need:
                    body = bytes(self._buffer[_HEADER.size : need])
                    del self._buffer[:need]
                    try:
                        message = json.loads(body)
                    except (ValueError, RecursionError) as exc:
                        raise ProtocolError(f"undecodable message: {exc}") from None
                    if type(message) is not dict:
                        raise ProtocolError("message is not an object")
                    return message
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                ready, _, _ = select.select([self.fd], [], [], remaining)
                if not ready:
                    return None
            chunk = os.read(self.fd, max(need - len(self._buffer), 1 << 16))
            if not chunk:
                raise ProtocolError("peer closed the pipe")
            self._buffer += chunk
