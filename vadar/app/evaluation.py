"""What `Vadar.evaluate` and `Vadar.build` return: the records the command line writes, read back.

An `Evaluation` is its run directory (`results.jsonl`, `summary.json`, `run.json`), exactly as
`vadar eval` leaves it, with the summary and the per-question results as typed records; it prints
as one line and, in a notebook, shows the run report. A `Build` holds the batch reports
`vadar build-api` prints and shows them, with the validation gate's rounds, as a page; its
coverage is read back from `coverage.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from vadar.app.display import framed
from vadar.library.coverage import COVERAGE_FILE, Coverage
from vadar.library.shape_route import ShapeReport  # noqa: F401  (a batch report part the CLI prints)
from vadar.runs.ablation import AblationReport
from vadar.runs.build_cost import COST_FILE, BuildCost
from vadar.runs.evaluation import EvalSummary
from vadar.runs.pipeline import BatchReport
from vadar.runs.results import QuestionResult, ResultsFile
from vadar.runs.validation import ValidationReport


@dataclass(frozen=True, repr=False)
class Evaluation:
    """One evaluation: its summary, its run directory, and the results read from it."""

    summary: EvalSummary
    out_dir: Path
    method: str

    @cached_property
    def results(self) -> list[QuestionResult]:
        """One record per question, as `results.jsonl` holds them (the last answer of each)."""
        return ResultsFile(self.out_dir / "results.jsonl").read()

    @property
    def accuracy(self) -> float:
        """The score weighted by questions (the summary's `total`)."""
        return self.summary.metrics.total

    @property
    def questions(self) -> int:
        return self.summary.questions

    def html(self, *, db: Path | None = None) -> str:
        """The run report as one self-contained HTML text (`vadar report --single-file`); `db` is
        the library database to show beside it."""
        from vadar.report.run_report import run_report_page

        return run_report_page(self.out_dir, db=db)

    def report(self, out_dir: Path | None = None, *, db: Path | None = None) -> Path:
        """Write the run report (`vadar report`) to `out_dir` (default RUN_DIR/report); returns its page."""
        from vadar.report import build_report

        return build_report(self.out_dir, out_dir, db=db).index

    def _repr_html_(self) -> str:
        return framed(self.html(), height=900, title=f"vadar report: {self.out_dir.name}")

    def __repr__(self) -> str:
        failed = f", {len(self.summary.failed)} without a working program" if self.summary.failed else ""
        return (f"Evaluation({self.out_dir}: {self.method}, {self.questions} questions, "
                f"accuracy {self.accuracy:.3f}{failed})")


@dataclass(frozen=True, repr=False)
class Build:
    """One growth of the library: a report per batch, and the library it left."""

    out_dir: Path
    batches: list[BatchReport] = field(default_factory=list)
    functions: int = 0
    """Implemented functions in the library afterwards."""
    database: Path | None = None
    validation: ValidationReport | None = None
    """The validation gate's rounds on the build questions (None: `library.validation` is off, or nothing was built)."""

    @property
    def implemented(self) -> list[str]:
        return [name for batch in self.batches for name in batch.implemented]

    @property
    def coverage(self) -> Coverage | None:
        """The share of build questions whose steps all have an admitted helper, at the build's end
        (`coverage.json`; None for a build directory written before it was recorded)."""
        path = self.out_dir / COVERAGE_FILE
        return Coverage.from_dict(json.loads(path.read_text(encoding="utf-8"))) if path.exists() else None

    @property
    def cost(self) -> BuildCost | None:
        """What the build asked of the model, stage by stage, in its last run (`build_cost.json`;
        None for a build directory written before it was recorded)."""
        path = self.out_dir / COST_FILE
        return BuildCost.from_dict(json.loads(path.read_text(encoding="utf-8"))) if path.exists() else None

    def html(self) -> str:
        """The build as one self-contained HTML page: each batch, then the validation gate."""
        from vadar.report.build_page import build_page

        return build_page(out_dir=self.out_dir, batches=self.batches, functions=self.functions,
                          database=self.database, validation=self.validation, coverage=self.coverage)

    def _repr_html_(self) -> str:
        return framed(self.html(), title=f"vadar build: {self.out_dir.name}")

    def __repr__(self) -> str:
        built = sum(not b.skipped for b in self.batches)
        return (f"Build({self.out_dir}: {built} of {len(self.batches)} batches built, "
                f"{len(self.implemented)} functions implemented, library {self.functions} functions)")


@dataclass(frozen=True)
class Ablation:
    """The same questions under several module configurations, and the files written from it."""

    report: AblationReport
    table: Path
    """`ablation.md`"""
    csv: Path
    chart: Path
    """`ablation.png`, a bar chart"""
