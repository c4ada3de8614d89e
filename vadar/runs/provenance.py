"""Which code wrote a run: the package version and, in a git checkout, the commit.

A results page quotes the commit its figures were made at; a run resumed after a fix holds answers
of two commits. `run.json` lists every code version that wrote to the directory, in order, so a
reader can tell (and `vadar compare` can show) without trusting anyone's notes.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

import vadar

PACKAGE_ROOT = Path(vadar.__file__).resolve().parent.parent


@functools.cache
def code_version() -> dict[str, Any]:
    """{"version": the package version, "commit": short hash or None, "dirty": uncommitted changes}.

    The commit is the checkout's the package was imported from; an installed wheel has none."""
    found: dict[str, Any] = {"version": vadar.__version__, "commit": None, "dirty": False}
    try:
        commit = _git("rev-parse", "--short", "HEAD")
        if commit:
            found["commit"] = commit
            found["dirty"] = bool(_git("status", "--porcelain", "--untracked-files=no", "--", "vadar",
                                       "base_modules", "omni3d_bench", "api_store"))
    except (OSError, subprocess.SubprocessError):  # no git, or not a checkout
        pass
    return found


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(PACKAGE_ROOT), *args], capture_output=True, text=True, timeout=10)
    return done.stdout.strip() if done.returncode == 0 else ""
