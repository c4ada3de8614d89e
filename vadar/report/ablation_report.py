"""The report of a `vadar ablate` output: configurations side by side, and per question which
configuration got it right, which is where a module that limits accuracy shows."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omni3d_bench.metrics import summarize
from base_modules.registry import SLOTS
from vadar.report.library import load_library
from vadar.report.questions import NO_FAMILY, OUTCOMES, question_anchor
from vadar.report.plots import totals_chart
from vadar.report.render import write_page
from vadar.report.run_files import ablation_table
from vadar.report.run_report import INDEX_NAME, RunReport, build_run_report


@dataclass
class ConfigColumn:
    name: str
    backends: dict[str, str]
    per_type: dict[str, str]
    total: float
    mean_over_types: float
    outcomes: dict[str, int]
    link: str


@dataclass
class MatrixRow:
    question_id: str
    question: str
    family: str
    gold: str
    cells: list[dict[str, Any] | None] = field(default_factory=list)

    @property
    def disagree(self) -> bool:
        return len({cell["outcome"] for cell in self.cells if cell}) > 1


@dataclass
class AblationReport:
    path: Path
    runs: list[RunReport]
    rows: list[MatrixRow]


def _column(report: RunReport, link: str, table: dict[str, dict[str, str]]) -> ConfigColumn:
    views = report.questions
    name = report.run.path.name
    backends = report.run.modules or {slot: table.get(name, {}).get(slot, "") for slot in SLOTS}
    metrics = summarize((v.answer_type, v.score) for v in views)
    return ConfigColumn(
        name=name, backends=backends,
        per_type={t: f"{s.mean:.3f}" for t, s in metrics.per_type.items()},
        total=metrics.total, mean_over_types=metrics.mean_over_types,
        outcomes={o: sum(v.outcome == o for v in views) for o in OUTCOMES}, link=link,
    )


def build_ablation_report(entries: list[Path], out_dir: Path, *, data: Path | None = None,
                          db: Path | None = None, inline_images: bool = False) -> AblationReport:
    """`out_dir/index.html` for the comparison, and one run report per configuration below it."""
    library = load_library(db)
    runs = []
    for entry in entries:
        # a copy per configuration: each report lists the questions of its own run per function
        runs.append(build_run_report(entry, out_dir / entry.name, data=data, library=copy.deepcopy(library),
                                     inline_images=inline_images, up_link=f"../{INDEX_NAME}"))
    table = {row["configuration"]: row for row in ablation_table(entries[0].parent)}
    columns = [_column(run, f"{run.run.path.name}/{INDEX_NAME}", table) for run in runs]
    rows: dict[str, MatrixRow] = {}
    for index, run in enumerate(runs):
        for view in run.questions:
            row = rows.get(view.question_id)
            if row is None:
                row = rows[view.question_id] = MatrixRow(view.question_id, view.question, view.family,
                                                         view.gold, [None] * len(runs))
            if row.family == NO_FAMILY:
                row.family = view.family
            row.cells[index] = {"outcome": view.outcome, "answer": view.answer,
                                "link": f"{columns[index].link}#{question_anchor(view.question_id)}"}
    matrix = list(rows.values())
    types = list(dict.fromkeys(t for c in columns for t in c.per_type))
    chart = totals_chart([c.name for c in columns], [c.total for c in columns], "accuracy per configuration")
    path = write_page(
        out_dir / INDEX_NAME, "ablation.html.j2", name=entries[0].resolve().parent.name,
        configs=columns, slots=list(SLOTS), types=types, chart=chart, rows=matrix,
        disagreeing=sum(r.disagree for r in matrix), families=sorted({r.family for r in matrix}),
    )
    return AblationReport(path, runs, matrix)
