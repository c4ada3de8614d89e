"""`vadar llm ...` commands: run the embedded server in the foreground, or benchmark an endpoint."""

from __future__ import annotations

import signal
import time
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.table import Table

from vadar.app import open as open_vadar
from vadar.cli.errors import FAILED, user_errors
from vadar.cli.options import settings_flags
from vadar.config import VadarConfig

if TYPE_CHECKING:
    from vadar.app.endpoint import BenchReport

app = typer.Typer(no_args_is_help=True, help="llm commands")


@app.command()
@settings_flags()
def serve(
    settings: VadarConfig,
    port: Optional[int] = typer.Option(None, "--port", help="port on 127.0.0.1 (default: VADAR_EMBEDDED_PORT or a free one)"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="echo the llama.cpp server log"),
) -> None:
    """Run the embedded OpenAI-compatible server in the foreground until Ctrl-C."""
    console = Console()
    signal.signal(signal.SIGTERM, _raise_interrupt)  # `kill`, docker stop: stop as cleanly as Ctrl-C
    sink = (lambda line: console.print(line, markup=False, highlight=False)) if verbose else None
    with user_errors():
        try:
            with open_vadar(settings, quiet=True) as v, v.serve_llm(
                    port=port, on_loading=lambda path: console.print(f"loading {path} ...", highlight=False),
                    log_sink=sink) as server:
                console.print(f"[green]ready[/green] in {server.startup_s:.1f}s")
                console.print(f"base URL: [bold]{server.base_url}[/bold]")
                console.print(f"model:    [bold]{settings.llm.model}[/bold]")
                console.print(f"use it:   VADAR_LLM_BASE_URL={server.base_url}  (Ctrl-C stops the server)")
                while server.running:
                    time.sleep(0.5)
                console.print("[red]the server exited unexpectedly[/red]")
                for line in server.log_tail(20):
                    console.print(f"  | {line}", markup=False, highlight=False)
                raise typer.Exit(FAILED)
        except KeyboardInterrupt:
            console.print("stopped")


def _raise_interrupt(*_: object) -> None:
    raise KeyboardInterrupt


@app.command()
@settings_flags()
def bench(
    settings: VadarConfig,
    prompt_tokens: int = typer.Option(512, "--prompt-tokens", min=16, help="approximate prompt length"),
    max_tokens: int = typer.Option(64, "--max-tokens", min=1, help="tokens to generate per request"),
    repeats: int = typer.Option(2, "--repeats", min=1, help="distinct (uncached) requests"),
) -> None:
    """Measure prompt-processing and decode tokens/s, and prompt-cache reuse on a repeated prompt."""
    console = Console()

    def ready(base_url: str, seconds: float) -> None:
        console.print(f"embedded server ready in {seconds:.1f}s at {base_url}")

    with user_errors(), open_vadar(settings, quiet=True) as v:
        report = v.bench_llm(prompt_tokens=prompt_tokens, max_tokens=max_tokens, repeats=repeats, on_ready=ready)
    _print_report(console, report)


def _print_report(console: Console, report: BenchReport) -> None:
    table = Table(title=f"{report.model} @ {report.base_url}")
    for column in ("request", "prompt tok", "cached tok", "prompt tok/s", "gen tok", "decode tok/s", "wall s", "source"):
        table.add_column(column, justify="left" if column in ("request", "source") else "right")
    for r in report.requests:
        table.add_row(
            r.label, str(r.prompt_tokens), _fmt(r.cached_tokens), _fmt(r.prompt_tokens_per_s),
            str(r.completion_tokens), _fmt(r.decode_tokens_per_s), f"{r.wall_s:.2f}", r.source,
        )
    console.print(table)
    console.print(f"prompt processing: [bold]{_fmt(report.prompt_tokens_per_s)}[/bold] tokens/s (median of cold requests)")
    console.print(f"decode:            [bold]{_fmt(report.decode_tokens_per_s)}[/bold] tokens/s (median of cold requests)")
    repeat = report.repeat
    if repeat is not None:
        console.print(
            f"repeated prompt:   {_fmt(repeat.cached_tokens)} of {repeat.prompt_tokens} prompt tokens "
            f"served from the prompt cache"
        )


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)
