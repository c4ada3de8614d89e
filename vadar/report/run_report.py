"""The report of one run directory: summary, one entry per question, and the library."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vadar.report.data_lookup import DataLookup
from vadar.report.library import Library, load_library
from vadar.report.plots import accuracy_chart, time_chart
from vadar.report.pictures import ImageSink
from vadar.report.questions import QuestionView, file_sink, inline_sink, question_views
from vadar.report.render import render
from vadar.report.run_files import RunFiles, load_run
from vadar.report.summary import RunSummaryView, summarize_run

INDEX_NAME = "index.html"


@dataclass
class RunReport:
    """What was written and what it holds, for the command line and for tests."""

    path: Path
    run: RunFiles
    questions: list[QuestionView]
    summary: RunSummaryView
    library: Library
    problems: list[str]


def link_library(library: Library, views: list[QuestionView]) -> None:
    """Record on each function which questions of this run called it."""
    by_name = {f.name: f for f in library.functions}
    for view in views:
        for name, _ in view.library_used:
            by_name[name].used_by.append((view.question_id, view.anchor))


def build_run_report(run_dir: Path, out_dir: Path, *, data: Path | None = None, db: Path | None = None,
                     library: Library | None = None, inline_images: bool = False,
                     up_link: str | None = None) -> RunReport:
    """Write `out_dir/index.html` (and its pictures under `out_dir/images/` unless inlined).

    `data` overrides the data set recorded in the run (to find images and families); `db` is the
    library database or export to show (`library` passes one already read, as ablations do).
    """
    run = load_run(run_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report, html = _run_report(run, out_dir / INDEX_NAME, data=data, db=db, library=library,
                               sink=inline_sink() if inline_images else file_sink(out_dir), up_link=up_link)
    report.path.write_text(html, encoding="utf-8")
    return report


def run_report_page(run_dir: Path, *, data: Path | None = None, db: Path | None = None) -> str:
    """The report of a run directory as one self-contained HTML text (pictures inlined), written
    nowhere: what a notebook shows for an evaluation."""
    return _run_report(load_run(run_dir), Path(run_dir) / "report" / INDEX_NAME, data=data, db=db, library=None,
                       sink=inline_sink(), up_link=None)[1]


def _run_report(run: RunFiles, path: Path, *, data: Path | None, db: Path | None, library: Library | None,
                sink: ImageSink, up_link: str | None) -> tuple[RunReport, str]:
    lookup = DataLookup.open(data if data is not None else run.data, run.split)
    library = library if library is not None else load_library(db)
    views = question_views(run.rows, lookup, sink, library=library.anchors())
    link_library(library, views)
    summary = summarize_run(run, views)
    charts = []
    if summary.per_family:
        charts.append(("accuracy per family", accuracy_chart(summary.per_family, "accuracy per family")))
    elif summary.per_type:
        charts.append(("accuracy per answer type", accuracy_chart(summary.per_type, "accuracy per answer type")))
    if views:
        charts.append(("time per question", time_chart(views)))
    problems = [p for p in (lookup.problem,) if p]
    missing = sum(v.image_note is not None for v in views)
    if missing:
        problems.append(f"{missing} of {len(views)} images were not found (pass --data DIR to point at the data set)")
    html = render(
        "run.html.j2", run_name=run.name, summary=summary, questions=views,
        library=library, charts=charts, problems=problems, up_link=up_link,
        families=sorted({v.family for v in views}), types=sorted({v.answer_type for v in views}),
    )
    return RunReport(path, run, views, summary, library, problems), html
