"""`vadar report`: write the HTML report of a run or an ablation (`Vadar.report`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from vadar.app import Vadar
from vadar.cli.errors import user_errors
from vadar.cli.options import settings_flags
from vadar.config import VadarConfig

console = Console()


@settings_flags()
def report_command(
    settings: VadarConfig,
    run_dir: Annotated[Path, typer.Argument(help="A run directory (results.jsonl) or the output of `vadar ablate`.")],
    out: Annotated[Path | None, typer.Option("--out", help="Directory for index.html. Default: RUN_DIR/report.")] = None,
    data: Annotated[Path | None, typer.Option(
        "--data", help="Data set directory, if it moved since the run (images and question families).")] = None,
    db: Annotated[Path | None, typer.Option(
        "--db", dir_okay=False,
        help="Library database, or a JSON export of it. Default: paths.database from the config.")] = None,
    single_file: Annotated[bool, typer.Option(
        "--single-file", help="Embed the pictures in index.html instead of writing images/ beside it.")] = False,
) -> None:
    """Write a static HTML report: summary, every question with its boxes and program, the library."""
    started = time.perf_counter()
    with user_errors():
        result = Vadar.report(run_dir, out, data=data, db=db if db is not None else settings.paths.database,
                              single_file=single_file)
    seconds = time.perf_counter() - started
    what = (f"{result.configurations} configurations, {result.questions} questions"
            if result.kind == "ablation" else f"{result.questions} questions")
    console.print(f"wrote {result.index} ({what}, {seconds:.1f} s)", highlight=False)
