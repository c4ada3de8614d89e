"""Oracle-module ablation: the same questions under several module configurations.

Each grid entry sets every perception module to `oracle`, `real` or a plugin. All entries run in
one session, so they share the library and the LLM response cache: the first attempt at each
question sends the same prompt, gets the same program, and only the module outputs differ. That
isolates which module limits accuracy (VADAR's central measurement). On a Ray cluster the
entries run concurrently.
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from base_modules.registry import SLOTS, BackendError, backend_name, parse_assignment, resolve
from vadar.config import VadarConfig
from vadar.runs.evaluation import EvalSummary
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import Session

if TYPE_CHECKING:
    from vadar.runs.executors.ray_cluster import RayCluster


class GridError(ValueError):
    """A grid entry cannot be parsed; the message shows the accepted forms."""


@dataclass(frozen=True)
class GridEntry:
    """One module configuration: a name for tables and the backend of every slot."""

    name: str
    backends: dict[str, str]


def parse_grid_entry(text: str) -> GridEntry:
    """`real`, `oracle`, or `BASE+slot=backend[,slot=backend...]` such as `real+depth=oracle`."""
    base, _, rest = text.strip().partition("+")
    if not base or "=" in base:
        raise GridError(f"grid entry {text!r}: start with a base backend, e.g. 'real' or 'real+depth=oracle'")
    try:
        pairs = [parse_assignment(item) for item in filter(None, (p.strip() for p in rest.split(",")))]
        backends = resolve(base, dict(pairs))
    except BackendError as exc:
        raise GridError(f"grid entry {text!r}: {exc}") from None
    return GridEntry(_entry_name(backend_name(base), backends), backends)


def _entry_name(base: str, backends: dict[str, str]) -> str:
    changed = [f"{slot}={b}" for slot, b in backends.items() if b != base]
    return f"all-{base}" if not changed else f"{base}+" + ",".join(changed)


def default_grid() -> list[GridEntry]:
    """All real, all oracle, and each single module switched to oracle from all real."""
    entries = [parse_grid_entry("real"), parse_grid_entry("oracle")]
    entries += [parse_grid_entry(f"real+{slot}=oracle") for slot in SLOTS]
    return entries


@dataclass
class AblationReport:
    method: str
    entries: list[GridEntry] = field(default_factory=list)
    summaries: list[EvalSummary] = field(default_factory=list)

    def answer_types(self) -> list[str]:
        return list(dict.fromkeys(t for s in self.summaries for t in s.metrics.per_type))

    def rows(self) -> list[dict[str, str]]:
        rows = []
        for entry, summary in zip(self.entries, self.summaries, strict=True):
            row = {"configuration": entry.name, **{slot: entry.backends[slot] for slot in SLOTS}}
            for answer_type in self.answer_types():
                part = summary.metrics.per_type.get(answer_type)
                row[answer_type] = f"{part.mean:.4f}" if part else ""
            row["total"] = f"{summary.metrics.total:.4f}"
            row["mean_over_types"] = f"{summary.metrics.mean_over_types:.4f}"
            row["questions"] = str(summary.questions)
            rows.append(row)
        return rows


def run_ablation(session: Session, selection: DataSelection, out_dir: Path, grid: Sequence[GridEntry], *,
                 method: str = "vadar", show_progress: bool = True,
                 cluster: RayCluster | None = None) -> AblationReport:
    """Evaluate `selection` once per grid entry into `out_dir/<entry name>/` (each resumable).

    With a Ray `cluster` the entries run at once, their questions interleaved on the cluster; each
    entry's results are still written by this process only, into its own run directory.
    """
    report = AblationReport(method=method, entries=list(grid))
    if cluster is None:
        for number, entry in enumerate(grid, start=1):
            if show_progress:
                session.progress.stage(f"configuration {number}/{len(grid)}: {entry.name}")
            data = selection.prepare(_with_backends(session.config, entry.backends))
            report.summaries.append(evaluate(session, data, out_dir / entry.name, method=method,
                                             show_progress=show_progress))
        return report
    prepared = [selection.prepare(_with_backends(session.config, entry.backends), load=False) for entry in grid]
    if show_progress:
        session.progress.stage(f"{len(grid)} configurations at once on Ray")
    with ThreadPoolExecutor(max_workers=len(grid), thread_name_prefix="vadar-ablation") as threads:
        futures = [threads.submit(evaluate, session, data, out_dir / entry.name, method=method,
                                  show_progress=False, cluster=cluster)
                   for entry, data in zip(grid, prepared, strict=True)]
        report.summaries = [future.result() for future in futures]
    return report


def _with_backends(config: VadarConfig, backends: dict[str, str]) -> VadarConfig:
    modules = dataclasses.replace(config.modules, per_module=dict(backends))
    return dataclasses.replace(config, modules=modules)


def write_report(report: AblationReport, out_dir: Path) -> tuple[Path, Path, Path]:
    """`ablation.md`, `ablation.csv` and the bar chart `ablation.png` in `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = report.rows()
    columns = list(rows[0]) if rows else ["configuration"]
    csv_path = out_dir / "ablation.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    shown = ["configuration", *report.answer_types(), "total", "mean_over_types", "questions"]
    lines = [f"# Module ablation ({report.method})", "",
             "| " + " | ".join(shown) + " |", "|---|" + "---:|" * (len(shown) - 1)]
    lines += ["| " + " | ".join(row[c] for c in shown) + " |" for row in rows]
    md_path = out_dir / "ablation.md"
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return md_path, csv_path, _bar_chart(report, out_dir / "ablation.png")


def _bar_chart(report: AblationReport, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    names = [entry.name for entry in report.entries]
    totals = [summary.metrics.total for summary in report.summaries]
    figure, axis = plt.subplots(figsize=(max(6.0, 1.1 * len(names)), 4.0))
    bars = axis.bar(range(len(names)), totals, color="#4C72B0")
    axis.bar_label(bars, labels=[f"{t:.2f}" for t in totals], padding=2)
    axis.set_xticks(range(len(names)), names, rotation=30, ha="right")
    axis.set_ylim(0, 1.05)
    axis.set_ylabel("accuracy (weighted total)")
    axis.set_title(f"Module ablation: {report.method}")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
