"""Side-by-side comparison of finished runs, read from their `summary.json` files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vadar.runs.evaluation import summarize_results
from vadar.runs.results import ResultsFile
from vadar.runs.manifest import MANIFEST_NAME


class CompareError(ValueError):
    """A run directory has no readable summary; the message names it."""


@dataclass(frozen=True)
class RunSummary:
    label: str
    data: dict[str, Any]

    @property
    def per_type(self) -> dict[str, dict[str, float]]:
        return self.data.get("accuracy", {}).get("per_type", {})


def load_summary(path: Path) -> RunSummary:
    """A run directory (or its summary.json): figures come from `results.jsonl`, the run's record.

    `summary.json` adds what only the run knew (library size, LLM usage); a run interrupted
    before writing it is still compared from its results and `run.json`.
    """
    file = path / "summary.json" if path.is_dir() else path
    run_dir = file.parent
    data = {**_read_json(run_dir / MANIFEST_NAME), **_read_json(file)}
    results = ResultsFile(run_dir / "results.jsonl").read()
    if results:
        data.update(summarize_results(results).as_dict())
    elif not file.exists():
        raise CompareError(f"{path}: no summary.json or results.jsonl (run `vadar eval` there first)")
    techniques = data.get("techniques")  # reasoning techniques, e.g. samples=3+formalize
    shown = f", {techniques}" if techniques and techniques != "none" else ""
    label = f"{data.get('method', '?')}{shown} ({run_dir.name})"
    return RunSummary(label, data)


def _read_json(file: Path) -> dict[str, Any]:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except json.JSONDecodeError as exc:
        raise CompareError(f"{file} is not valid JSON: {exc}") from None


def comparison_table(runs: Sequence[RunSummary]) -> str:
    """A markdown table: one column per run, rows for answer types, totals and cost."""
    types = list(dict.fromkeys(t for run in runs for t in run.per_type))
    header = "| | " + " | ".join(run.label for run in runs) + " |"
    rows = [header, "|---|" + "---:|" * len(runs)]

    def row(name: str, cells: list[str]) -> None:
        rows.append(f"| {name} | " + " | ".join(cells) + " |")

    row("questions", [str(run.data.get("questions", "")) for run in runs])
    for answer_type in types:
        row(f"{answer_type}", [_score(run.per_type.get(answer_type)) for run in runs])
    accuracy = [run.data.get("accuracy", {}) for run in runs]
    row("**total (weighted)**", [_fmt(a.get("total")) for a in accuracy])
    row("**mean over types**", [_fmt(a.get("mean_over_types")) for a in accuracy])
    row("failed programs", [str(len(run.data.get("failed_questions", []))) for run in runs])
    row("LLM replies / question", [_fmt(run.data.get("mean_llm_replies_per_question"), 2) for run in runs])
    row("seconds / question", [_fmt(run.data.get("mean_seconds_per_question"), 1) for run in runs])
    row("prompt tokens / question", [_fmt(run.data.get("mean_prompt_tokens_per_question"), 0) for run in runs])
    row("completion tokens / question",
        [_fmt(run.data.get("mean_completion_tokens_per_question"), 0) for run in runs])
    row("library functions (used)",
        [f"{run.data.get('library_functions', 0)} ({run.data.get('library_functions_used', 0)})" for run in runs])
    return "\n".join(rows) + "\n"


def _score(part: dict[str, float] | None) -> str:
    return "" if not part else f"{part['mean']:.3f} (n={part['count']})"


def _fmt(value: Any, digits: int = 3) -> str:
    return "" if value is None else f"{float(value):.{digits}f}"
