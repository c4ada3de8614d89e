"""`vadar solve`: answer one question about one image (or the frames of one scene) and show how."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax

from omni3d_bench.types import DatasetError
from vadar.app import LiveProgress
from vadar.app import open as open_vadar
from vadar.cli.errors import FAILED, print_error, user_errors
from vadar.cli.options import MODULES, REASONING, settings_flags
from vadar.config import VadarConfig
from vadar.text import invalid_unicode, rounded

console = Console()


@settings_flags(*MODULES, *REASONING)
def solve_command(
    settings: VadarConfig,
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
    library: Annotated[bool, typer.Option("--library/--no-library", help="Use the learned library.")] = True,
    html: Annotated[Path | None, typer.Option(
        "--html", dir_okay=False, help="Also write an HTML page: the image with the boxes, the program, the calls.")] = None,
) -> None:
    """Answer one question: prints the answer, the program and the module calls it made."""
    with user_errors():
        problem = invalid_unicode(question)
        if problem is not None:
            raise DatasetError(f"--question {problem}; pass it as UTF-8 text")
        if bool(image) == (video is not None):
            raise DatasetError("give the image with --image (repeated for several frames) or a "
                               "directory of frames with --video, not both")
        with LiveProgress(console) as progress, open_vadar(settings, progress=progress) as v:
            solution = v.solve(list(image) if image else video, question, regions=region or (), scene=scene,
                               library=library)
        if solution.regions:
            console.print(f"[bold]question:[/bold] {escape(solution.question)}", highlight=False)
        for named in solution.regions:
            console.print(f"  {named.name}: box {list(rounded(named.box))}"
                          f"{', mask' if named.mask_counts else ''}", highlight=False, markup=False)
        unwritten = None
        if html is not None:
            try:
                console.print(f"wrote {solution.save_html(html)}", highlight=False)
            except OSError as exc:  # a full or read-only target: the answer below is still shown
                unwritten = f"cannot write {exc.filename or html}: {exc.strerror or exc}; choose another --html"
                print_error(unwritten)
    console.print(f"[bold]program[/bold] ({solution.attempts} LLM "
                  f"{'reply' if solution.attempts == 1 else 'replies'}, {solution.seconds:.1f}s):")
    console.print(Syntax(solution.program or "# no program", "python", theme="ansi_dark"))
    console.print(f"[bold]module calls[/bold] ({len(solution.calls)}, values rounded for display):")
    for call in solution.calls:
        console.print(f"  {call}", highlight=False, markup=False)
    if solution.error:
        console.print(f"[red]no working program after {solution.attempts} attempts:[/red] "
                      f"{escape(solution.error)}", highlight=False)
        raise typer.Exit(code=FAILED)
    console.print(f"[bold]answer:[/bold] {escape(str(rounded(solution.answer, 4)))}", highlight=False)
    vote = solution.vote
    if vote is not None:
        console.print(f"agreement: {vote.agreeing} of {vote.working} working programs "
                      f"({len(vote.samples)} sampled)", highlight=False)
    if unwritten is not None:
        raise typer.Exit(code=FAILED)
