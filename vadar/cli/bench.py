"""`vadar bench generate`: render the built-in benchmark from a seed."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from vadar.app.errors import cannot_write
from vadar.cli.errors import fail, refuse

app = typer.Typer(no_args_is_help=True, help="Generate the built-in 3D benchmark.")

MAX_VIEWS = 32
"""Frames per multi-view scene: 32 is the most a video question of VSI-Bench samples (rendering
takes about 0.8 s a frame; 100,000 frames a scene would run for days)."""

SPLIT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A split names `questions/<split>.json`: no path separators or `..`, so it stays under --out."""


@app.callback()
def bench() -> None:
    """The built-in benchmark: rendered 3D scenes with exact ground truth."""


@app.command("generate")
def generate(
    out: Annotated[Path, typer.Option(help="Directory to write the benchmark into.")],
    scenes: Annotated[int, typer.Option(min=1, help="Number of scenes to render.")] = 20,
    seed: Annotated[int, typer.Option(min=0, help="Seed (0 or more); the same seed gives identical files.")] = 0,
    split: Annotated[str, typer.Option(help="Name of the question split (letters, digits, '-', '_', '.').")] = "test",
    per_scene: Annotated[int, typer.Option(min=1, help="Questions per scene (at most).")] = 6,
    views: Annotated[int, typer.Option(min=1, max=MAX_VIEWS, help=(
        f"Frames per scene along a camera path in a room, with multi-view questions (at most {MAX_VIEWS}); "
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
        raise refuse(f"unknown scene kind {kind!r}; expected one of {', '.join(KINDS)}")
    if kind == "warehouse" and views > 1:
        raise refuse("warehouse scenes are single images; leave --views at 1")
    if not SPLIT_NAME.fullmatch(split):
        raise refuse(f"--split {split!r}: a split is named with letters, digits, '-', '_' and '.' (such as test); "
                     "it names a file under --out")
    if out.exists() and not out.is_dir():
        raise refuse(f"--out {out} is a file; name a directory for the benchmark")
    marker = out / "benchmark.json"
    if marker.is_file():
        try:
            existing = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise fail(f"{marker} cannot be read ({exc}); remove it, or choose another --out") from None
        existing = existing if isinstance(existing, dict) else {}
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
    except RendererUnavailable as exc:  # the renderer's extra is missing, as for any other extra
        raise fail(exc) from None
    except OSError as exc:  # a full or read-only --out
        raise fail(cannot_write(exc, out)) from None
    seconds = time.perf_counter() - started
    frames = f" ({info['scenes'] * views} frames, {seconds / (info['scenes'] * views):.2f} s per " \
        "frame)" if views > 1 else ""
    typer.echo(f"wrote {info['scenes']} scenes and {info['questions']} questions to {out} "
               f"in {seconds:.1f} s{frames}")
    typer.echo("families: " + ", ".join(f"{k} {v}" for k, v in info["families"].items()))
    typer.echo("answer types: " + ", ".join(f"{k} {v}" for k, v in info["answer_types"].items()))
