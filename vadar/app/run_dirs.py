"""Where a job writes when no directory is named: `runs/<data>-<split>-<method>[-<modules>]`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vadar.runs.prepare import PreparedData


def modules_label(backends: Mapping[str, str]) -> str:
    """Short run-directory suffix: '' for all oracle, 'real' for all real, else 'depth-real+vqa-real'."""
    chosen = set(backends.values())
    if chosen <= {"oracle"}:
        return ""
    if len(chosen) == 1:
        return chosen.pop()
    return "+".join(f"{slot}-{backend}" for slot, backend in backends.items() if backend != "oracle")


def default_run_dir(data: str | Path | PreparedData | None, prepared: PreparedData, method: str) -> Path:
    """The run directory of `method` on `data` (None: the built-in sample), relative to the
    working directory, named after the data set, split, method and non-oracle modules."""
    if isinstance(data, PreparedData):
        name = Path(str(data.dataset.root)).resolve().name
    else:
        name = Path(data).resolve().name if data is not None else "sample"
    return Path("runs") / "-".join(filter(None, [name, prepared.split, method, modules_label(prepared.backends)]))
