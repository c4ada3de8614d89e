"""`vadar solve`: answer one question about one image and show how."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.syntax import Syntax

from api_store import FunctionStatus
from base_modules.oracle import clevr_oracle_modules
from omni3d_bench.images import image_handle
from omni3d_bench.types import DatasetError
from vadar.agents.program import ProgramAgent
from vadar.api_text import render_api
from vadar.cli.errors import user_errors
from vadar.cli.options import ModuleOption, ModulesOption, apply_module_choice
from vadar.config import load_config
from vadar.pipeline import build_modules, open_session, program_namespace

console = Console()


def load_scene(path: Path, image: Path) -> dict[str, Any]:
    """One CLEVR-style scene: a scene object, or the entry of a scenes file for this image."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"scene file {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"scene file {path} is not valid JSON: {exc}") from None
    if isinstance(data, dict) and "objects" in data:
        return data
    scenes = data.get("scenes") if isinstance(data, dict) else None
    if isinstance(scenes, list):
        for scene in scenes:
            if isinstance(scene, dict) and scene.get("image_filename") == image.name:
                return scene
        raise DatasetError(f"scene file {path} has no scene with image_filename {image.name!r}")
    raise DatasetError(f"scene file {path}: expected a scene with 'objects' or a file with 'scenes'")


def solve_command(
    image: Annotated[Path, typer.Option("--image", help="The image file.")],
    question: Annotated[str, typer.Option("--question", help="The question to answer.")],
    scene: Annotated[Path | None, typer.Option(
        "--scene", help="Scene annotations (CLEVR format) for the oracle modules.")] = None,
    modules: ModulesOption = None,
    module: ModuleOption = None,
    library: Annotated[bool, typer.Option("--library/--no-library", help="Use the learned library.")] = True,
    config: Annotated[Path | None, typer.Option("--config", help="TOML configuration file.")] = None,
    html: Annotated[Path | None, typer.Option(
        "--html", dir_okay=False, help="Also write an HTML page: the image with the boxes, the program, the calls.")] = None,
) -> None:
    """Answer one question: prints the answer, the program and the module calls it made."""
    with user_errors():
        if not question.strip():
            raise DatasetError("the question is empty; pass it with --question")
        settings = load_config(config)
        overrides = apply_module_choice(settings, modules, module)
        handle = image_handle(image.stem, image)
        annotations = load_scene(scene, image) if scene is not None else None
        oracle = None
        if annotations is not None:
            lookup = lambda image_id: annotations if image_id == handle.image_id else None  # noqa: E731
            oracle = lambda: clevr_oracle_modules(lookup)  # noqa: E731
        module_set = build_modules(settings, oracle=oracle, overrides=overrides)
        with open_session(settings) as session:
            functions = session.store.functions(FunctionStatus.IMPLEMENTED) if library else []
            namespace = program_namespace(handle, module_set, functions)
            agent = ProgramAgent(session.llm, session.executor, max_attempts=settings.agents.program_attempts)
            outcome = agent.solve(question, render_api(functions), namespace)
        if html is not None:
            from vadar.report import write_question_page

            page = write_question_page(html, question=question, image=image, outcome=outcome, functions=functions)
            console.print(f"wrote {page}", highlight=False)
    console.print(Syntax(outcome.program or "# no program", "python", theme="ansi_dark"))
    console.print("[bold]module calls[/bold]")
    for call in outcome.calls:
        result = call.error if call.error else call.result
        console.print(f"  {call.name}({', '.join(repr(a) for a in call.args[1:])}) -> {result!r}", highlight=False)
    if outcome.error:
        console.print(f"[red]no working program after {outcome.attempts} attempts:[/red] {outcome.error}")
        raise typer.Exit(code=1)
    console.print(f"[bold]answer:[/bold] {outcome.answer}", highlight=False)
