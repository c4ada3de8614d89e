"""The `vadar` command line: a thin layer over the library."""

from __future__ import annotations

import typer

from vadar.cli import gold, library, llm

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Answer 3D spatial questions about images by writing programs over a self-growing API.",
)
app.add_typer(library.app, name="library", help="Inspect the persistent API library.")
app.add_typer(llm.app, name="llm", help="Run or benchmark the embedded LLM server.")
app.command("eval-gold")(gold.eval_gold) if hasattr(gold, "eval_gold") else None


def main() -> None:
    app()
