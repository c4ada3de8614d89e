"""`vadar eval-gold`: run gold programs (CLEVR's, or a generated multi-view or warehouse
benchmark's) through the oracle modules and score them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from omni3d_bench.types import DatasetError
from vadar.cli.errors import print_error

app = typer.Typer(no_args_is_help=True, help="gold commands")


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
    from omni3d_bench.datasets.bench import BenchDataset, is_bench_dir
    from omni3d_bench.datasets.clevr import ClevrDataset
    from omni3d_bench.sample import SAMPLE_SPLIT, sample_path
    from vadar.runs.gold_eval import evaluate_gold, evaluate_view_gold

    err = Console(stderr=True)
    root = data if data is not None else sample_path()
    bench = is_bench_dir(root)
    split = split or (SAMPLE_SPLIT if data is None else "test" if bench else "dev")
    try:
        dataset = BenchDataset(root) if bench else ClevrDataset(root)
        evaluate = evaluate_view_gold if bench else evaluate_gold
        questions = dataset.questions(split)[:limit]
        progress = Progress(
            TextColumn("gold programs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err, transient=True, disable=not err.is_terminal,
        )
        with progress:
            task = progress.add_task("gold", total=len(questions))
            report = evaluate(dataset, questions, lambda: progress.advance(task))  # type: ignore[arg-type]
    except DatasetError as exc:
        print_error(exc)
        raise typer.Exit(code=2) from None

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
