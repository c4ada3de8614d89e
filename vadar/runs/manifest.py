"""What a run directory was started with, so resuming never mixes answers made under other settings.

`vadar eval` resumes by skipping questions already in `results.jsonl`. Resuming with another method,
module backend, model or data set would silently blend two experiments into one summary, so the
first start writes `run.json` and every later start must match it. `run.json` also lists, under
`written_by`, each code version (package version, commit) that wrote to the directory; a new one
is appended, never compared, so a run may be resumed after a fix and still say so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from vadar.config import ConfigError
from vadar.runs.provenance import code_version
from vadar.runs.storage import write_text_atomically, writing

MANIFEST_NAME = "run.json"
WRITTEN_BY = "written_by"
UNRECORDED = {"version": None, "commit": None, "dirty": None}  # a run.json from before `written_by`
LOCK_NAME = ".run.lock"


class RunMismatchError(ConfigError):
    """The run directory holds results made under other settings."""


class RunLockedError(ConfigError):
    """Another process is writing to the run directory."""


_held: dict[Path, FileLock] = {}
_held_guard = threading.Lock()


def lock_run_dir(out_dir: Path) -> None:
    """Make this process the only writer of `out_dir` until it exits (or `release_run_dir`).

    Two runs answering the same questions into one directory would write every result twice
    and implement functions twice; the second one stops at once with one line instead. The lock
    is an OS file lock, so a run killed with SIGKILL leaves nothing to clean up.
    """
    key = out_dir.resolve()
    with _held_guard:
        if key in _held:
            return
        lock = FileLock(str(out_dir / LOCK_NAME), timeout=0, thread_local=False)
        with writing(out_dir / LOCK_NAME, "lock"):  # a read-only or full file system
            out_dir.mkdir(parents=True, exist_ok=True)
            try:
                lock.acquire()
            except Timeout:  # an OSError too: told apart first
                raise RunLockedError(
                    f"another vadar run is writing to {out_dir}; wait for it to finish, or choose another --out"
                ) from None
        _held[key] = lock


def release_run_dir(out_dir: Path) -> None:
    """Give up the lock `lock_run_dir` took (processes that start several runs call this)."""
    with _held_guard:
        lock = _held.pop(out_dir.resolve(), None)
    if lock is not None:
        lock.release(force=True)


def _flatten(identity: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in identity.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def claim_run_dir(out_dir: Path, identity: Mapping[str, Any]) -> None:
    """Lock the run directory, then record `identity` in it, or check that it was made with it."""
    lock_run_dir(out_dir)
    path = out_dir / MANIFEST_NAME
    if path.exists():
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RunMismatchError(f"{path} is not valid JSON ({exc}); delete it to adopt the directory") from None
        writers = list(recorded.pop(WRITTEN_BY, [UNRECORDED]))
        then, now = _flatten(recorded), _flatten(json.loads(json.dumps(identity, default=str)))
        differ = [key for key in sorted(then.keys() & now.keys()) if then[key] != now[key]]
        if differ:
            started = ", ".join(f"{key}={then[key]}" for key in differ)
            asked = ", ".join(f"{key}={now[key]}" for key in differ)
            raise RunMismatchError(
                f"{out_dir} holds results made with {started}; this command asks for {asked}. "
                f"Choose another --out, or delete {out_dir} to start over.")
        if not writers or writers[-1] != code_version():
            recorded[WRITTEN_BY] = [*writers, code_version()]
            write_text_atomically(path, json.dumps(recorded, indent=2, default=str) + "\n")
        return
    written = {**identity, WRITTEN_BY: [code_version()]}
    write_text_atomically(path, json.dumps(written, indent=2, default=str) + "\n")
