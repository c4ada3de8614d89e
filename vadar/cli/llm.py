"""`vadar llm ...` commands: run the embedded server in the foreground, or benchmark an endpoint."""

from __future__ import annotations

import dataclasses
import signal
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from vadar.cli.errors import print_error
from vadar.cli.options import SetOption, load_settings

app = typer.Typer(no_args_is_help=True, help="llm commands")

_CONFIG_OPTION = typer.Option(None, "--config", help="vadar TOML config (default: $VADAR_CONFIG or ./vadar.toml)")


def _load(config_path: Optional[Path], assignments: list[str] | None):  # -> VadarConfig
    from vadar.config import ConfigError

    try:
        return load_settings(config_path, assignments)
    except ConfigError as exc:
        print_error(exc)
        raise typer.Exit(2) from exc


@app.command()
def serve(
    port: Optional[int] = typer.Option(None, "--port", help="port on 127.0.0.1 (default: VADAR_EMBEDDED_PORT or a free one)"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="echo the llama.cpp server log"),
    config_path: Optional[Path] = _CONFIG_OPTION,
    assignments: SetOption = None,
) -> None:
    """Run the embedded OpenAI-compatible server in the foreground until Ctrl-C."""
    from vadar.llm.embedded import EmbeddedServer, EmbeddedServerError
    from vadar.llm.model_files import ModelFilesError, resolve_model_path

    config = _load(config_path, assignments)
    console = Console()
    signal.signal(signal.SIGTERM, _raise_interrupt)  # `kill`, docker stop: stop as cleanly as Ctrl-C
    embedded = dataclasses.replace(config.embedded, port=port) if port is not None else config.embedded
    try:
        model_path = resolve_model_path(embedded, config.paths.model_cache)
        console.print(f"loading {model_path} ...")
        sink = (lambda line: console.print(line, markup=False, highlight=False)) if verbose else None
        with EmbeddedServer(embedded, config.llm.model, model_path, log_sink=sink) as server:
            console.print(f"[green]ready[/green] in {server.startup_s:.1f}s")
            console.print(f"base URL: [bold]{server.base_url}[/bold]")
            console.print(f"model:    [bold]{config.llm.model}[/bold]")
            console.print(f"use it:   VADAR_LLM_BASE_URL={server.base_url}  (Ctrl-C stops the server)")
            while server.running:
                time.sleep(0.5)
            console.print("[red]the server exited unexpectedly[/red]")
            for line in server.log_tail(20):
                console.print(f"  | {line}", markup=False, highlight=False)
            raise typer.Exit(1)
    except (ModelFilesError, EmbeddedServerError) as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        console.print("stopped")


def _raise_interrupt(*_: object) -> None:
    raise KeyboardInterrupt


@app.command()
def bench(
    prompt_tokens: int = typer.Option(512, "--prompt-tokens", min=16, help="approximate prompt length"),
    max_tokens: int = typer.Option(64, "--max-tokens", min=1, help="tokens to generate per request"),
    repeats: int = typer.Option(2, "--repeats", min=1, help="distinct (uncached) requests"),
    config_path: Optional[Path] = _CONFIG_OPTION,
    assignments: SetOption = None,
) -> None:
    """Measure prompt-processing and decode tokens/s, and prompt-cache reuse on a repeated prompt."""
    import openai

    from vadar.llm.bench import run_bench
    from vadar.llm.embedded import EmbeddedServerError, open_endpoint
    from vadar.llm.model_files import ModelFilesError

    config = _load(config_path, assignments)
    console = Console()
    embedded = config.llm.base_url is None
    started = time.monotonic()
    try:
        with open_endpoint(config) as base_url:
            if embedded:
                console.print(f"embedded server ready in {time.monotonic() - started:.1f}s at {base_url}")
            client = openai.OpenAI(base_url=base_url, api_key=config.llm.api_key, timeout=config.llm.timeout_s, max_retries=0)
            report = run_bench(
                client, config.llm.model, prompt_tokens=prompt_tokens, max_tokens=max_tokens,
                repeats=repeats, ignore_eos=embedded,
            )
    except (ModelFilesError, EmbeddedServerError, openai.OpenAIError) as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    _print_report(console, report)


def _print_report(console: Console, report) -> None:  # report: BenchReport
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
