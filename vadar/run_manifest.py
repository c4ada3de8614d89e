"""What a run directory was started with, so resuming never mixes answers made under other settings.

`vadar eval` resumes by skipping questions already in `results.jsonl`. Resuming with another method,
module backend, model or data set would silently blend two experiments into one summary, so the
first start writes `run.json` and every later start must match it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vadar.config import ConfigError

MANIFEST_NAME = "run.json"


class RunMismatchError(ConfigError):
    """The run directory holds results made under other settings."""


def _flatten(identity: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in identity.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def claim_run_dir(out_dir: Path, identity: Mapping[str, Any]) -> None:
    """Record `identity` in a new run directory, or check that an existing one was made with it."""
    path = out_dir / MANIFEST_NAME
    if path.exists():
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RunMismatchError(f"{path} is not valid JSON ({exc}); delete it to adopt the directory") from None
        then, now = _flatten(recorded), _flatten(json.loads(json.dumps(identity, default=str)))
        differ = [key for key in sorted(then.keys() & now.keys()) if then[key] != now[key]]
        if differ:
            started = ", ".join(f"{key}={then[key]}" for key in differ)
            asked = ", ".join(f"{key}={now[key]}" for key in differ)
            raise RunMismatchError(
                f"{out_dir} holds results made with {started}; this command asks for {asked}. "
                f"Choose another --out, or delete {out_dir} to start over.")
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(identity, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(temporary, path)
