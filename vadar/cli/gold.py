"""`vadar eval-gold`: run gold programs (CLEVR's, or a generated multi-view or warehouse
benchmark's) through the oracle modules and score them (`Vadar.evaluate_gold`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from vadar.app import Vadar
from vadar.cli.errors import user_errors


def eval_gold(
    data: Annotated[Path | None, typer.Option(
        help="CLEVR-layout directory (questions/, scenes/, images/) or a multi-view or warehouse "
        "benchmark (vadar bench generate --views K / --kind warehouse); default: built-in sample."
    )] = None,
    split: Annotated[str | None, typer.Option(
        help="Question split (questions/<split>.json); default: 'sample' for the built-in "
        "sample, 'test' for a generated benchmark, else 'dev'."
    )] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Evaluate only the first N.")] = None,
    show_mismatches: Annotated[bool, typer.Option(
        "--show-mismatches", help="List every question whose gold program missed its answer."
    )] = False,
) -> None:
    """Check modules, data and metric: gold programs on oracle modules must reproduce answers."""
    err = Console(stderr=True)
    progress = Progress(
        TextColumn("gold programs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=not err.is_terminal,
    )
    task = progress.add_task("gold", total=None)
    with user_errors(), progress:
        report = Vadar.evaluate_gold(data, split=split, limit=limit, on_question=lambda: progress.advance(task),
                                     on_start=lambda total: progress.update(task, total=total))
    if show_mismatches:
        for outcome in report.mismatches:
            q = outcome.question
            typer.echo(f"mismatch {q.question_id} ({q.image_id}): gold {q.answer!r}, "
                       f"got {outcome.prediction!r} | {q.question}")
    if report.skipped:
        typer.echo(f"skipped {report.skipped} question(s) without a gold program or answer")
    errors = sum(o.error for o in report.outcomes)
    typer.echo(f"mismatches: {len(report.mismatches)} ({errors} raised errors)")
    typer.echo(f"accuracy: {report.accuracy:.3f} ({report.count} questions)")
