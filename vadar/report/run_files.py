"""Read what a run directory recorded: `results.jsonl`, `summary.json` and `run.json`.

The report must open runs written by any version of vadar, so rows are read as plain dicts and
every field is optional: an older run without `step_errors`, or a newer one with extra fields,
still renders. Like `ResultsFile`, a torn last line is skipped and a re-answered question keeps
its latest row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vadar.runs.results import ResultsFile
from vadar.runs.manifest import MANIFEST_NAME

RESULTS_NAME = "results.jsonl"
SUMMARY_NAME = "summary.json"
ABLATION_TABLE = "ablation.csv"


class ReportError(ValueError):
    """The given directory holds nothing a report can be made from; the message says why."""


@dataclass
class RunFiles:
    """One run directory as recorded: its rows in answer order, its summary and its manifest."""

    path: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.summary.get("name") or self.path.name)

    @property
    def data(self) -> str | None:
        """The data set the run answered, as recorded (summary first, then the manifest)."""
        value = self.summary.get("data") or self.manifest.get("data")
        return str(value) if value else None

    @property
    def split(self) -> str | None:
        value = self.summary.get("split") or self.manifest.get("split")
        return str(value) if value else None

    @property
    def method(self) -> str:
        return str(self.summary.get("method") or self.manifest.get("method")
                   or (self.rows[0].get("method") if self.rows else None) or "vadar")

    @property
    def modules(self) -> dict[str, str]:
        modules = self.manifest.get("modules")
        return dict(modules) if isinstance(modules, dict) else {}


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path} is not valid JSON: {exc}") from None
    return data if isinstance(data, dict) else {}


def is_run_dir(path: Path) -> bool:
    return (path / RESULTS_NAME).is_file()


def load_run(path: Path) -> RunFiles:
    """Load one run directory; it must at least hold `results.jsonl`."""
    path = Path(path)
    if not path.is_dir():
        raise ReportError(f"{path} is not a directory")
    results = path / RESULTS_NAME
    if not results.is_file():
        raise ReportError(f"{path} has no {RESULTS_NAME}: not a run directory (run `vadar eval` there first)")
    return RunFiles(path, ResultsFile(results).rows(), _read_json(path / SUMMARY_NAME), _read_json(path / MANIFEST_NAME))


def ablation_entries(path: Path) -> list[Path]:
    """The configuration run directories of a `vadar ablate` output, in the table's order.

    An ablation directory holds `ablation.csv` (or at least several run directories) and one run
    directory per grid entry; an ordinary run directory yields nothing.
    """
    path = Path(path)
    if not path.is_dir() or is_run_dir(path):
        return []
    found = sorted((child for child in path.iterdir() if child.is_dir() and is_run_dir(child)),
                   key=lambda child: child.name)
    order = [row["configuration"] for row in ablation_table(path)]
    if order:
        rank = {name: index for index, name in enumerate(order)}
        found.sort(key=lambda child: (rank.get(child.name, len(rank)), child.name))
    if not order and len(found) < 2:
        return []
    return found


def ablation_table(path: Path) -> list[dict[str, str]]:
    """The rows of `ablation.csv` in an ablation directory (none if it has no table)."""
    import csv

    table = Path(path) / ABLATION_TABLE
    if not table.is_file():
        return []
    with table.open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row.get("configuration")]
