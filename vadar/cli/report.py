"""`vadar report`: write the HTML report of a run or an ablation."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from vadar.cli.errors import print_error, user_errors
from vadar.cli.options import ConfigOption, SetOption, load_settings
from vadar.runs.storage import StorageError, describe

console = Console()


def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (results.jsonl) or the output of `vadar ablate`.")],
    out: Annotated[Path | None, typer.Option("--out", help="Directory for index.html. Default: RUN_DIR/report.")] = None,
    data: Annotated[Path | None, typer.Option(
        "--data", help="Data set directory, if it moved since the run (images and question families).")] = None,
    db: Annotated[Path | None, typer.Option(
        "--db", dir_okay=False,
        help="Library database, or a JSON export of it. Default: paths.database from the config.")] = None,
    single_file: Annotated[bool, typer.Option(
        "--single-file", help="Embed the pictures in index.html instead of writing images/ beside it.")] = False,
    config: ConfigOption = None, assignments: SetOption = None,
) -> None:
    """Write a static HTML report: summary, every question with its boxes and program, the library."""
    from vadar.report import ReportError, build_report

    started = time.perf_counter()
    with user_errors():
        if db is None:
            db = load_settings(config, assignments).paths.database
        try:
            result = build_report(run_dir, out, data=data, db=db, inline_images=single_file)
        except ReportError as exc:
            print_error(exc)
            raise typer.Exit(code=1) from None
        except OSError as exc:  # a full or read-only target
            target = exc.filename or out or run_dir / "report"
            raise StorageError(f"cannot write {target}: {describe(exc)}") from None
    seconds = time.perf_counter() - started
    what = (f"{result.configurations} configurations, {result.questions} questions"
            if result.kind == "ablation" else f"{result.questions} questions")
    console.print(f"wrote {result.index} ({what}, {seconds:.1f} s)", highlight=False)
