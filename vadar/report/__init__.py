"""HTML reports of what vadar's programs did: runs, questions, module calls and the library.

    from vadar.report import build_report
    result = build_report(Path("runs/clevr-dev-vadar"), Path("runs/clevr-dev-vadar/report"))

`build_report` takes a run directory (`results.jsonl`, `summary.json`, `run.json`) or the output
directory of `vadar ablate`, and writes a static `index.html` that opens from disk with no network:
styles, scripts and charts are inline, pictures sit in `images/` beside it (or inline too).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vadar.report.ablation_report import AblationReport, build_ablation_report
from vadar.report.question_page import write_question_page
from vadar.report.run_files import ReportError, ablation_entries
from vadar.report.run_report import RunReport, build_run_report

__all__ = ["AblationReport", "ReportError", "ReportResult", "RunReport", "build_report",
           "default_out_dir", "write_question_page"]


@dataclass
class ReportResult:
    """Where the report's entry page is, and what it covers."""

    index: Path
    kind: str  # "run" or "ablation"
    questions: int
    configurations: int = 1


def default_out_dir(source: Path) -> Path:
    """`RUN_DIR/report`: the report lives with the run it describes."""
    return Path(source) / "report"


def build_report(source: Path, out_dir: Path | None = None, *, data: Path | None = None,
                 db: Path | None = None, inline_images: bool = False) -> ReportResult:
    """Write the report of a run or ablation directory; raises `ReportError` if it is neither."""
    source = Path(source)
    out_dir = Path(out_dir) if out_dir is not None else default_out_dir(source)
    entries = ablation_entries(source)
    if entries:
        ablation = build_ablation_report(entries, out_dir, data=data, db=db, inline_images=inline_images)
        questions = len(ablation.rows)
        return ReportResult(ablation.path, "ablation", questions, len(entries))
    run = build_run_report(source, out_dir, data=data, db=db, inline_images=inline_images)
    return ReportResult(run.path, "run", len(run.questions))
