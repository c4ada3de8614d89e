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

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Largest frame either side accepts; anything bigger is a protocol error."""

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
    depth: int = 0,
) -> Any:
    """Turn plain data into a JSON-able tree.

    `dataclass_key` names a dataclass type (None refuses it); `convert` may first replace
    foreign values (numpy scalars and arrays on the host side) with plain ones.
    """
    if depth > MAX_DEPTH:
        raise CodecError(f"value is nested more than {MAX_DEPTH} levels deep")
    if convert is not None:
        value = convert(value)
    kind = type(value)
    if kind in Scalar:
        return value
    for base in (bool, int, float, str):  # IntEnum, str-valued enums and the like
        if isinstance(value, base):
            return _exact(base, value)
    nested = depth + 1
    for base, tag in _SEQUENCE_TAGS:  # subclasses (NamedTuple, deque) travel as their base
        if isinstance(value, base):
            return {tag: [encode(v, dataclass_key, convert=convert, depth=nested) for v in value]}
    if isinstance(value, dict):  # Counter, defaultdict and OrderedDict arrive as plain dicts
        return {
            "D": [
                [
                    encode(k, dataclass_key, convert=convert, depth=nested),
                    encode(v, dataclass_key, convert=convert, depth=nested),
                ]
                for k, v in value.items()
            ]
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        key = dataclass_key(kind)
        if key is not None:
            fields = [
                [f.name, encode(getattr(value, f.name), dataclass_key, convert=convert, depth=nested)]
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


def decode(tree: Any, make_dataclass: Callable[[str, dict[str, Any]], Any], *, depth: int = 0) -> Any:
    """Rebuild a value from `encode`'s tree; never executes anything but `make_dataclass`."""
    if depth > MAX_DEPTH + 2:
        raise CodecError("encoded value is nested too deeply")
    kind = type(tree)
    if kind in Scalar:
        return tree
    if kind is not dict or len(tree) not in (1, 2):
        raise CodecError(f"malformed encoded value of type {kind.__name__}")
    nested = depth + 1
    if "C" in tree:
        key, fields = tree["C"], tree.get("f")
        if type(key) is not str or type(fields) is not list:
            raise CodecError("malformed dataclass entry")
        values: dict[str, Any] = {}
        for pair in fields:
            if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                raise CodecError("malformed dataclass field")
            values[pair[0]] = decode(pair[1], make_dataclass, depth=nested)
        return make_dataclass(key, values)
    (tag, items), = tree.items()
    if type(items) is not list:
        raise CodecError("malformed container entry")
    if tag == "D":
        out: dict[Any, Any] = {}
        for pair in items:
            if type(pair) is not list or len(pair) != 2:
                raise CodecError("malformed dict entry")
            try:
                out[decode(pair[0], make_dataclass, depth=nested)] = decode(
                    pair[1], make_dataclass, depth=nested
                )
            except TypeError as exc:  # unhashable key
                raise CodecError(str(exc)) from None
        return out
    builders: dict[str, Callable[[Any], Any]] = {"L": list, "T": tuple, "S": set, "F": frozenset}
    if tag not in builders:
        raise CodecError(f"unknown tag {tag!r}")
    try:
        return builders[tag](decode(v, make_dataclass, depth=nested) for v in items)
    except TypeError as exc:  # unhashable set member
        raise CodecError(str(exc)) from None


def dumps(message: dict[str, Any]) -> bytes:
    """Serialise one message (already encoded) to a length-prefixed frame."""
    try:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    except (ValueError, RecursionError) as exc:  # e.g. an int beyond Python's str() digit limit
        raise CodecError(f"cannot be sent: {exc}") from None
    if len(body) > MAX_MESSAGE_BYTES:
        size, limit = len(body) / 2**20, MAX_MESSAGE_BYTES / 2**20
        raise CodecError(f"too large to send ({size:.0f} MB encoded, the limit is {limit:.0f} MB)")
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
