"""`vadar bench generate`: render the built-in benchmark from a seed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from vadar.cli.errors import print_error

app = typer.Typer(no_args_is_help=True, help="Generate the built-in 3D benchmark.")


@app.callback()
def bench() -> None:
    """The built-in benchmark: rendered 3D scenes with exact ground truth."""


@app.command("generate")
def generate(
    out: Annotated[Path, typer.Option(help="Directory to write the benchmark into.")],
    scenes: Annotated[int, typer.Option(min=1, help="Number of scenes to render.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed; the same seed gives identical files.")] = 0,
    split: Annotated[str, typer.Option(help="Name of the question split.")] = "test",
    per_scene: Annotated[int, typer.Option(min=1, help="Questions per scene (at most).")] = 6,
    views: Annotated[int, typer.Option(min=1, help=(
        "Frames per scene along a camera path in a room, with multi-view questions; "
        "1 renders single images."))] = 1,
    kind: Annotated[str, typer.Option(help=(
        "Scene kind: 'objects' (household objects, Omni3D-Bench-style questions) or 'warehouse' "
        "(pallets, shelves, boxes, transporters and buffer zones, questions that point at "
        "regions)."))] = "objects",
) -> None:
    """Render scenes with exact 3D ground truth and write metric questions about them."""
    from omni3d_bench.generator import generate_benchmark
    from omni3d_bench.generator.build import KINDS
    from omni3d_bench.generator.render import RendererUnavailable

    err = Console(stderr=True)
    if kind not in KINDS:
        print_error(f"unknown scene kind {kind!r}; expected one of {', '.join(KINDS)}")
        raise typer.Exit(code=2)
    if kind == "warehouse" and views > 1:
        print_error("warehouse scenes are single images; leave --views at 1")
        raise typer.Exit(code=2)
    marker = out / "benchmark.json"
    if marker.is_file():
        existing = json.loads(marker.read_text(encoding="utf-8"))
        wanted = {"seed": seed, "scenes": scenes, "split": split}
        if all(existing.get(k) == v for k, v in wanted.items()) and existing.get("per_scene", per_scene) == per_scene \
                and existing.get("views", 1) == views and existing.get("kind", "objects") == kind:
            typer.echo(f"{out} already holds this benchmark ({scenes} scenes, seed {seed}); reusing it")
            return
    started = time.perf_counter()

    def progress(done: int) -> None:
        if err.is_terminal:
            err.print(f"rendered {done}/{scenes}", end="\r")

    try:
        info = generate_benchmark(out, scenes, seed=seed, split=split, per_scene=per_scene,
                                  progress=progress, views=views, kind=kind)
    except RendererUnavailable as exc:
        print_error(exc)
        raise typer.Exit(code=2) from None
    seconds = time.perf_counter() - started
    frames = f" ({info['scenes'] * views} frames, {seconds / (info['scenes'] * views):.2f} s per " \
        "frame)" if views > 1 else ""
    typer.echo(f"wrote {info['scenes']} scenes and {info['questions']} questions to {out} "
               f"in {seconds:.1f} s{frames}")
    typer.echo("families: " + ", ".join(f"{k} {v}" for k, v in info["families"].items()))
    typer.echo("answer types: " + ", ".join(f"{k} {v}" for k, v in info["answer_types"].items()))
