"""Storage failures under a run directory as one line naming the path and the cause.

A read-only or full file system raises `OSError` from deep inside a run (the lock, `run.json`,
`results.jsonl`, the summary); the CLI shows `StorageError` as `error: cannot write PATH: CAUSE`
instead of a traceback.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class StorageError(RuntimeError):
    """A file under the run directory or the home could not be written or read."""


def describe(exc: OSError) -> str:
    """The OS's own words for the cause (`No space left on device`), with a hint where one helps."""
    cause = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        cause += "; free some space and rerun the same command to resume"
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        cause += "; choose a writable --out (or VADAR_HOME)"
    return cause


@contextmanager
def writing(path: Path, action: str = "write") -> Iterator[None]:
    """Turn an `OSError` raised inside the block into a `StorageError` naming `path`."""
    try:
        yield
    except OSError as exc:
        raise StorageError(f"cannot {action} {path}: {describe(exc)}") from exc


def write_text_atomically(path: Path, text: str) -> None:
    """`path` gets `text` whole or not at all; a failed attempt leaves no temporary file behind."""
    temporary = path.with_name(path.name + ".tmp")
    with writing(path):
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, path)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise
