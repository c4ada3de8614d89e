"""`vadar solve`: answer one question about one image (or the frames of one scene) and show how."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax

from omni3d_bench.types import DatasetError
from vadar.cli.errors import print_error, user_errors
from vadar.cli.options import (FormalizeOption, ModuleOption, ModulesOption, ReflectOption, SamplesOption,
                               SizePriorsOption, TestsOption, apply_module_choice, apply_reasoning)
from vadar.config import load_config
from vadar.runs.methods import make_answerer
from vadar.runs.prepare import prepare_single
from vadar.runs.progress import LiveProgress
from vadar.runs.session import open_session
from vadar.text import invalid_unicode, rounded

console = Console()


def solve_command(
    question: Annotated[str, typer.Option("--question", help="The question to answer.")],
    image: Annotated[list[Path] | None, typer.Option(
        "--image", help="The image file; repeat it for several frames of one scene, in order.")] = None,
    video: Annotated[Path | None, typer.Option(
        "--video", file_okay=False, help="A directory of frames (file-name order) of one scene.")] = None,
    scene: Annotated[Path | None, typer.Option(
        "--scene", help="Scene annotations (CLEVR format) for the oracle modules.")] = None,
    region: Annotated[list[str] | None, typer.Option(
        "--region", help="A region the question points at, one per <mask> token, in order: a box "
        "x0,y0,x1,y1 in pixels, or a file (.json region record, .png or .npy binary mask).")] = None,
    modules: ModulesOption = None,
    module: ModuleOption = None,
    library: Annotated[bool, typer.Option("--library/--no-library", help="Use the learned library.")] = True,
    config: Annotated[Path | None, typer.Option("--config", help="TOML configuration file.")] = None,
    html: Annotated[Path | None, typer.Option(
        "--html", dir_okay=False, help="Also write an HTML page: the image with the boxes, the program, the calls.")] = None,
    samples: SamplesOption = None, formalize: FormalizeOption = None, reflect: ReflectOption = None,
    tests: TestsOption = None, size_priors: SizePriorsOption = None,
) -> None:
    """Answer one question: prints the answer, the program and the module calls it made."""
    with user_errors():
        problem = invalid_unicode(question)
        if problem is not None:
            raise DatasetError(f"--question {problem}; pass it as UTF-8 text")
        frames = frame_paths(image, video)
        settings = load_config(config)
        overrides = apply_module_choice(settings, modules, module)
        apply_reasoning(settings, samples, formalize, reflect, tests, size_priors)
        prepared = prepare_single(frames if len(frames) > 1 else frames[0], question, scene,
                                  settings, overrides, region or ())
        asked = prepared.questions[0]
        if asked.regions:
            console.print(f"[bold]question:[/bold] {escape(asked.question)}", highlight=False)
            for named in asked.regions:
                console.print(f"  {named.name}: box {list(rounded(named.box))}"
                              f"{', mask' if named.mask_counts else ''}", highlight=False, markup=False)
        with LiveProgress(console) as progress, open_session(settings, progress=progress) as session:
            method = "vadar" if library else "static-api"
            answer, functions = make_answerer(method, session, prepared)
            progress.stage(f"solving with {method} ({len(functions)} library functions)")
            progress.activity("Program agent: writing and running a program")
            outcome = answer(asked)
        unwritten = None
        if html is not None:
            from vadar.report import write_question_page

            try:
                page = write_question_page(html, question=asked.question if asked.regions else question,
                                           image=frames[0], outcome=outcome, functions=functions,
                                           frames=list(zip(asked.view_ids, asked.view_paths)),
                                           regions=asked.regions)
                console.print(f"wrote {page}", highlight=False)
            except OSError as exc:  # a full or read-only target: the answer below is still shown
                unwritten = f"cannot write {exc.filename or html}: {exc.strerror or exc}; choose another --html"
                print_error(unwritten)
    console.print(f"[bold]program[/bold] ({outcome.attempts} LLM "
                  f"{'reply' if outcome.attempts == 1 else 'replies'}, {outcome.seconds:.1f}s):")
    console.print(Syntax(outcome.program or "# no program", "python", theme="ansi_dark"))
    console.print(f"[bold]module calls[/bold] ({len(outcome.calls)}, values rounded for display):")
    for call in outcome.calls:
        result = call.error if call.error else rounded(call.result)
        arguments = ", ".join(repr(rounded(a)) for a in call.args[1:])
        console.print(f"  {call.name}({arguments}) -> {result!r}", highlight=False, markup=False)
    if outcome.error:
        console.print(f"[red]no working program after {outcome.attempts} attempts:[/red] "
                      f"{escape(outcome.error)}", highlight=False)
        raise typer.Exit(code=1)
    console.print(f"[bold]answer:[/bold] {escape(str(rounded(outcome.answer, 4)))}", highlight=False)
    if "agreement" in outcome.extra:
        samples = outcome.extra["samples"]
        agreeing = sum(1 for s in samples if not s["error"]) * outcome.extra["agreement"]
        console.print(f"agreement: {agreeing:.0f} of {sum(1 for s in samples if not s['error'])} working programs "
                      f"({len(samples)} sampled)", highlight=False)
    if unwritten is not None:
        raise typer.Exit(code=1)


def frame_paths(images: list[Path] | None, video: Path | None) -> list[Path]:
    """The images to reason about: the `--image` files in order, or the frames of `--video`."""
    from omni3d_bench.datasets.single import video_frames
    from omni3d_bench.types import DatasetError

    if bool(images) == (video is not None):
        raise DatasetError("give the image with --image (repeated for several frames) or a "
                           "directory of frames with --video, not both")
    return list(images) if images else video_frames(video)  # type: ignore[arg-type]
