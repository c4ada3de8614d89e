"""The `vadar` command line: a thin layer over the library."""

from __future__ import annotations

import signal
from types import FrameType

import typer

from vadar.cli import bench, gold, jobs, library, llm, report, solve

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Answer 3D spatial questions about images by writing programs over a self-growing API.",
)
app.command("run")(jobs.run_command)
app.command("build-api")(jobs.build_api_command)
app.command("eval")(jobs.eval_command)
app.command("solve")(solve.solve_command)
app.command("compare")(jobs.compare_command)
app.command("rescore")(jobs.rescore_command)
app.command("ablate")(jobs.ablate_command)
app.command("eval-gold")(gold.eval_gold)
app.command("report")(report.report_command)
app.add_typer(library.app, name="library", help="Inspect the persistent API library.")
app.add_typer(llm.app, name="llm", help="Run or benchmark the embedded LLM server.")
app.add_typer(bench.app, name="bench", help="Generate the built-in 3D benchmark.")


def stop_on_terminate(signum: int, frame: FrameType | None) -> None:
    """`kill` (SIGTERM) ends a job as Ctrl-C does: the build or evaluation records itself
    interrupted, the embedded server is shut down, and the same command resumes. A job started in
    the background by a non-interactive shell ignores SIGINT, so SIGTERM is the signal that reaches it."""
    raise KeyboardInterrupt


def stop_jobs_on_terminate() -> None:
    signal.signal(signal.SIGTERM, stop_on_terminate)


def main() -> None:
    stop_jobs_on_terminate()
    app()
