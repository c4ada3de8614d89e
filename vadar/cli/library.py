"""`vadar library ...` commands: list, show and export a library, and change it (add, import, distill,
check --retire, check-programs, track); each one call of `Library` or `Vadar`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from vadar.app import FunctionDetails, Library
from vadar.app import open as open_vadar
from vadar.app.library import predefined_module
from vadar.cli.errors import refuse, user_errors
from vadar.cli.options import settings_flags
from vadar.config import VadarConfig

app = typer.Typer(no_args_is_help=True, help="library commands")

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Library database file. Default: paths.database from the config "
        "(VADAR_HOME, VADAR_PATHS_DB_PATH).",
        dir_okay=False,
    ),
]
SplitOption = Annotated[str | None, typer.Option("--split", help="Its split (default: the only one).")]


def _library(db: Path | None, settings: VadarConfig) -> Library:
    """`--db`, else the configured library (`paths.database`, e.g. `--set paths.home=DIR`)."""
    return Library(db if db is not None else settings.paths.database)


def _existing(db: Path | None, settings: VadarConfig) -> Library:
    """The library, which must exist: a read-only command never creates it."""
    library = _library(db, settings)
    if not library.path.exists():
        raise refuse(f"no library database at {library.path} (run vadar first, or pass --db)")
    return library


def wide_console() -> Console:
    """The terminal's width on a terminal; piped to a file or a program, as wide as a row needs, so a
    table is never squeezed into 80 columns (one letter a line)."""
    console = Console()
    return console if console.is_terminal else Console(width=100_000)


@app.command("list")
@settings_flags()
def list_functions(
    settings: VadarConfig,
    show_all: Annotated[bool, typer.Option("--all", help="Include failed functions.")] = False,
    db: DbOption = None,
) -> None:
    """List the current version of every library function, in the order they were created."""
    library = _existing(db, settings)
    with user_errors():
        entries = library.list(include_failed=show_all)
        hidden = 0 if show_all else library.hidden_failed()
    if not entries:
        hint = f" ({hidden} failed: see --all)" if hidden else ""
        typer.echo(f"The library at {library.path} has no functions{hint}. "
                   "The predefined modules are always there: vadar library show loc")
        return
    table = Table(title=f"API library ({len(entries)} functions)", title_justify="left")
    table.add_column("name", overflow="fold", no_wrap=False)
    table.add_column("status")
    table.add_column("version", justify="right")
    table.add_column("signature", overflow="fold")
    table.add_column("admission")
    table.add_column("used", justify="right")
    table.add_column("errors", justify="right")
    table.add_column("right", justify="right")
    table.add_column("tokens saved", justify="right")
    table.add_column("last evaluation", justify="right")
    for entry in entries:
        record, used, decision = entry.function, entry.usage, entry.admission
        right = f"{used.correct}/{used.judged}" if used and used.judged else ""
        # Text(), not str: signatures like `list[BBox]` must not be read as rich markup.
        table.add_row(
            Text(record.name), record.status.value, str(record.version), Text(record.signature),
            f"{decision.decision} ({decision.mode})" if decision else "",
            str(used.used) if used else "0", str(used.errors) if used else "0", right,
            str(decision.evidence.get("tokens_saved", "")) if decision else "",
            _evaluation(entry.evaluation),
        )
    wide_console().print(table)


def _evaluation(evidence: dict | None) -> str:
    """`uses: score` of the last evaluation, with the baseline's score on the same questions."""
    if not evidence:
        return ""
    base = evidence.get("baseline_score")
    return f"{evidence['uses']}: {evidence['score']:g}" + (f" vs {base:g}" if base is not None else "")


@app.command()
@settings_flags()
def show(
    settings: VadarConfig,
    name: Annotated[str, typer.Argument(help="Function name, e.g. _left_of.")],
    db: DbOption = None,
) -> None:
    """Show one function: current code and docstring, status, dependencies and version history.

    A predefined module (`loc`, `depth`, `vqa`, `same_object`, `get_2D_object_size`) shows the
    signature and docstring the agents see.
    """
    predefined = predefined_module(name)
    if predefined is not None:
        typer.echo(f"{predefined.name}  (predefined module, always available)\n\n{predefined.stub}")
        return
    with user_errors():
        details = _existing(db, settings).show(name)
    assert isinstance(details, FunctionDetails)
    typer.echo(_describe(details))
    if details.decisions:
        story = details.story
        if story.lines:
            typer.echo("\nhow it got here:\n" + _indent(story.text()))
        typer.echo("\ndecisions:")
        for decision in details.decisions:
            evidence = json.dumps(decision.evidence, default=str, ensure_ascii=False)
            typer.echo(f"  v{decision.version} {decision.decision} ({decision.mode}) {decision.created_at}\n"
                       f"{_indent(evidence)}")


def _describe(details: FunctionDetails) -> str:
    current, history, dependents, n_attempts = (details.current, details.history, details.dependents,
                                                len(details.attempts))
    lines = [
        f"{current.name}  (version {current.version}, {current.status.value})",
        "",
        f"signature:    {current.signature}",
        f"dependencies: {', '.join(current.dependencies) or '-'}",
        f"used by:      {', '.join(dependents) or '-'}",
        f"attempts:     {n_attempts}",
    ]
    if current.last_error:
        lines.append(f"last error:   {current.last_error}")
    lines += ["", "docstring:", _indent(current.docstring), "", "code:"]
    lines.append(_indent(current.code) if current.code else "    (not implemented)")
    lines += ["", "history:"]
    for version in history:
        marker = "*" if version.is_current else " "
        provenance = ", ".join(
            f"{key} {value}"
            for key, value in (("run", version.run_id), ("batch", version.batch_id),
                               ("model", version.model))
            if value is not None
        )
        line = f"  {marker} v{version.version}  {version.status.value:<11} {version.created_at}"
        lines.append(f"{line}  {provenance}".rstrip())
    return "\n".join(lines)


def _indent(text: str) -> str:
    lines = text.strip("\n").splitlines()
    return "\n".join(("    " + line) if line.strip() else "" for line in lines)


@app.command()
@settings_flags()
def export(
    settings: VadarConfig,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the JSON here instead of to stdout.", dir_okay=False
        ),
    ] = None,
    programs: Annotated[
        bool, typer.Option("--programs", help="Also export every run's programs and answers.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Export the whole library, with every version and attempt, as JSON."""
    with user_errors():
        data = _existing(db, settings).export(output, programs=programs)
    if output is None:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False) + "\n", nl=False)
        return
    typer.echo(f"Exported {len(data['functions'])} functions to {output}", err=True)


@app.command("add")
@settings_flags()
def add(
    settings: VadarConfig,
    source: Annotated[Path, typer.Argument(help="A Python file of `def _name(...)` helpers with docstrings.",
                                           exists=True, dir_okay=False)],
    db: DbOption = None,
) -> None:
    """Add hand-written helpers to the library (admitted by hand, shown in prompts like learned ones)."""
    library = _library(db, settings)
    with user_errors():
        names = library.add(source)
    typer.echo(f"added {len(names)} functions to {library.path}: {', '.join(names)}")


@app.command("import")
@settings_flags()
def import_(
    settings: VadarConfig,
    source: Annotated[Path, typer.Argument(help="A JSON file written by `vadar library export`.", dir_okay=False)],
    replace: Annotated[bool, typer.Option("--replace", help="Import functions the library already has as their "
                                          "new current versions (otherwise they are refused).")] = False,
    with_build: Annotated[bool, typer.Option("--with-build", help="Also import the export's build runs (which "
                                             "questions it was built on) and right build programs (the worked "
                                             "examples programs are shown).")] = False,
    db: DbOption = None,
) -> None:
    """Import a library export: every function with its versions, attempts and decisions."""
    library = _library(db, settings)
    with user_errors():
        names = library.import_file(source, replace=replace, with_build=with_build)
    typer.echo(f"imported {len(names)} functions into {library.path}: {', '.join(names) or '-'}")


@app.command("distill")
@settings_flags()
def distill(
    settings: VadarConfig,
    data: Annotated[Path, typer.Option("--data", help="The data set the library was built on.")],
    split: SplitOption = None,
) -> None:
    """Distil helpers from the right build programs of the library, now (see docs/library.md)."""
    with user_errors(), open_vadar(settings) as v:
        report = v.distill(data, split=split, on_event=typer.echo)
    typer.echo(f"distilled {len(report.admitted)} helpers from {report.programs} right programs "
               f"({report.tokens_before} -> {report.tokens_after} code tokens): {', '.join(report.admitted) or '-'}")
    for name, reason in report.rejected.items():
        typer.echo(f"  not admitted {name}: {reason}")


@app.command("check")
@settings_flags()
def check(
    settings: VadarConfig,
    data: Annotated[Path, typer.Option("--data", help="A data set with ground truth (CLEVR scenes, a generated "
                                       "benchmark) whose scenes the helpers are checked on.")],
    split: SplitOption = None,
    retire: Annotated[bool, typer.Option("--retire", help="Retire the helpers that fail (history kept).")] = False,
) -> None:
    """Check every helper against the ground truth its name claims (relations, heights, distances)."""
    with user_errors(), open_vadar(settings) as v:
        checked = v.check_library(data, split=split, retire=retire)
    for name, result in checked.results.items():
        if result.passed is None:
            verdict = "no checkable claim" if result.claim is None else f"{result.claim}: no case to check"
        else:
            verdict = f"{result.claim}: {'passed' if result.passed else 'FAILED'} ({result.cases} cases)"
        typer.echo(f"{name}: {verdict}" + (f"  {result.failures[0]}" if result.failures else "")
                   + ("  retired" if name in checked.retired else ""))
    if not checked.results:
        typer.echo("the library has no implemented helper")


@app.command("check-programs")
@settings_flags()
def check_programs(
    settings: VadarConfig,
    data: Annotated[Path, typer.Option("--data", help="The data set the library was built on (its questions "
                                       "must know their answer on other scenes: CLEVR's functional programs).")],
    split: SplitOption = None,
) -> None:
    """Run every right build program on other build scenes its question applies to; those wrong there
    were right by chance and are no longer counted right (nor shown as worked examples)."""
    with user_errors(), open_vadar(settings) as v:
        checked = v.library.check_programs(v.select(data, split=split), v.config, on_event=typer.echo)
    if not checked.build_questions:
        typer.echo(f"no build run of this library was given {data}: it has no build question there to check")
        return
    if not checked.with_program:
        typer.echo("its build questions carry no functional program (CLEVR's): their answers on other scenes "
                   "are unknown, so nothing was checked")
        return
    typer.echo(f"{checked.checked} right programs of {checked.build_questions} build questions run on other build "
               f"scenes (library.scene_checks = {settings.library.scene_checks}): {checked.chance} right by chance")


@app.command("track")
@settings_flags()
def track(
    settings: VadarConfig,
    run: Annotated[Path, typer.Argument(help="A vadar evaluation's run directory.", exists=True, file_okay=False)],
    baseline: Annotated[Path, typer.Option("--baseline", help="A run without the library on the same questions "
                                           "(e.g. static-api).", exists=True, file_okay=False)],
    db: DbOption = None,
) -> None:
    """Compare each helper's programs in RUN with BASELINE on the same questions; retire those that did worse."""
    with user_errors():
        tracked = _existing(db, settings).track(run, baseline, min_uses=settings.library.retire_min_uses)
    for name, evidence in tracked.evaluated.items():
        typer.echo(f"{name}: {_evaluation(evidence)}"
                   + (f"  retired: {tracked.retired[name]}" if name in tracked.retired else ""))
    if not tracked.evaluated:
        typer.echo(f"no program of {run} calls a library function")
