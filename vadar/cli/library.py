"""`vadar library ...` commands: list, show and export a library, and change it (add, import, distill, check --retire, track)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from api_store import ApiStore, FunctionRecord, StoreError
from vadar.app.library import FunctionDetails, Library, predefined_module
from vadar.library.story import helper_story
from vadar.cli.options import ConfigOption, SetOption, load_settings
from vadar.config import ConfigError, VadarConfig

if TYPE_CHECKING:
    from vadar.runs.prepare import PreparedData

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


def _fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code=1)


def _settings(config: Path | None, assignments: list[str] | None) -> VadarConfig:
    """The configuration (`--config`, variables, `--set`); a refused setting is one line."""
    try:
        return load_settings(config, assignments)
    except ConfigError as exc:
        raise _fail(str(exc)) from exc


def _database(db: Path | None, assignments: list[str] | None) -> Path:
    """`--db`, else the configured library (`paths.database`, e.g. `--set paths.home=DIR`)."""
    return db if db is not None else _settings(None, assignments).paths.database


@contextmanager
def _open_store(path: Path, *, create: bool = False) -> Iterator[ApiStore]:
    """An existing library (or a new one with `create`) for the block; a missing or broken file,
    and a full or read-only disk met inside the block, are a one-line error, not a traceback."""
    if not create and not path.exists():
        raise _fail(f"no library database at {path} (run vadar first, or pass --db)")
    try:
        with ApiStore(path, create=create) as store:
            yield store
    except StoreError as exc:
        raise _fail(str(exc)) from exc


def _library(path: Path) -> Library:
    """The library at `path`, which must exist: a read-only command never creates it."""
    if not path.exists():
        raise _fail(f"no library database at {path} (run vadar first, or pass --db)")
    return Library(path)


@app.command("list")
def list_functions(
    show_all: Annotated[bool, typer.Option("--all", help="Include failed functions.")] = False,
    db: DbOption = None, assignments: SetOption = None,
) -> None:
    """List the current version of every library function, in the order they were created."""
    library = _library(_database(db, assignments))
    try:
        entries = library.list(include_failed=show_all)
        hidden = 0 if show_all else library.hidden_failed()
    except StoreError as exc:
        raise _fail(str(exc)) from exc
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
    Console().print(table)


def _evaluation(evidence: dict | None) -> str:
    """`uses: score` of the last evaluation, with the baseline's score on the same questions."""
    if not evidence:
        return ""
    base = evidence.get("baseline_score")
    return f"{evidence['uses']}: {evidence['score']:g}" + (f" vs {base:g}" if base is not None else "")


@app.command()
def show(
    name: Annotated[str, typer.Argument(help="Function name, e.g. _left_of.")],
    db: DbOption = None, assignments: SetOption = None,
) -> None:
    """Show one function: current code and docstring, status, dependencies and version history.

    A predefined module (`loc`, `depth`, `vqa`, `same_object`, `get_2D_object_size`) shows the
    signature and docstring the agents see.
    """
    predefined = predefined_module(name)
    if predefined is not None:
        typer.echo(f"{predefined.name}  (predefined module, always available)\n\n{predefined.stub}")
        return
    try:
        details = _library(_database(db, assignments)).show(name)
    except StoreError as exc:
        raise _fail(str(exc)) from exc
    assert isinstance(details, FunctionDetails)
    typer.echo(_describe(details.current, details.history, details.dependents, len(details.attempts)))
    if details.decisions:
        story = helper_story(name, [dataclasses.asdict(d) for d in details.decisions])
        if story.lines:
            typer.echo("\nhow it got here:\n" + _indent(story.text()))
        typer.echo("\ndecisions:")
        for decision in details.decisions:
            evidence = json.dumps(decision.evidence, default=str, ensure_ascii=False)
            typer.echo(f"  v{decision.version} {decision.decision} ({decision.mode}) {decision.created_at}\n"
                       f"{_indent(evidence)}")


def _describe(
    current: FunctionRecord, history: list[FunctionRecord], dependents: list[str], n_attempts: int
) -> str:
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
def export(
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the JSON here instead of to stdout.", dir_okay=False
        ),
    ] = None,
    programs: Annotated[
        bool, typer.Option("--programs", help="Also export every run's programs and answers.")
    ] = False,
    db: DbOption = None, assignments: SetOption = None,
) -> None:
    """Export the whole library, with every version and attempt, as JSON."""
    try:
        data = _library(_database(db, assignments)).export(programs=programs)
    except StoreError as exc:
        raise _fail(str(exc)) from exc
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc}") from exc
    typer.echo(f"Exported {len(data['functions'])} functions to {output}", err=True)


@app.command("add")
def add(
    source: Annotated[Path, typer.Argument(help="A Python file of `def _name(...)` helpers with docstrings.",
                                           exists=True, dir_okay=False)],
    db: DbOption = None, assignments: SetOption = None,
) -> None:
    """Add hand-written helpers to the library (admitted by hand, shown in prompts like learned ones)."""
    from api_store import DuplicateFunctionError
    from vadar.library.hand import HandLibraryError, add_functions

    try:
        path = _database(db, assignments)
        with ApiStore(path) as store:
            names = add_functions(store, source.read_text(encoding="utf-8"))
    except (ConfigError, StoreError, HandLibraryError, DuplicateFunctionError, SyntaxError) as exc:
        raise _fail(str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise _fail(f"{source} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    typer.echo(f"added {len(names)} functions to {path}: {', '.join(names)}")


@app.command("import")
def import_(
    source: Annotated[Path, typer.Argument(help="A JSON file written by `vadar library export`.", dir_okay=False)],
    replace: Annotated[bool, typer.Option("--replace", help="Import functions the library already has as their "
                                          "new current versions (otherwise they are refused).")] = False,
    db: DbOption = None, assignments: SetOption = None,
) -> None:
    """Import a library export: every function with its versions, attempts and decisions."""
    from vadar.library.importing import LibraryImportError, import_library

    with _open_store(_database(db, assignments), create=True) as store:
        try:
            names = import_library(store, source, replace=replace)
        except LibraryImportError as exc:
            raise _fail(str(exc)) from exc
        path = store.path
    typer.echo(f"imported {len(names)} functions into {path}: {', '.join(names) or '-'}")


def _prepare(data: Path, split: str | None, config: Path | None,
             assignments: list[str] | None) -> tuple[VadarConfig, PreparedData]:
    """The settings and the prepared data set of a command that works on a data set."""
    from vadar.runs.prepare import DataSelection

    try:
        settings = load_settings(config, assignments)
        return settings, DataSelection(data, split).prepare(settings)
    except (ConfigError, ValueError, OSError) as exc:
        raise _fail(str(exc)) from exc


@app.command("distill")
def distill(
    data: Annotated[Path, typer.Option("--data", help="The data set the library was built on.")],
    split: Annotated[str | None, typer.Option("--split", help="Its split (default: the only one).")] = None,
    config: ConfigOption = None, assignments: SetOption = None,
) -> None:
    """Distil helpers from the right build programs of the library, now (see docs/library.md)."""
    from vadar.runs.distillation import distill_helpers
    from vadar.runs.session import open_session

    settings, prepared = _prepare(data, split, config, assignments)
    with open_session(settings) as session:
        report = distill_helpers(session, prepared, prepared.questions, on_event=typer.echo)
    typer.echo(f"distilled {len(report.admitted)} helpers from {report.programs} right programs "
               f"({report.tokens_before} -> {report.tokens_after} code tokens): {', '.join(report.admitted) or '-'}")
    for name, reason in report.rejected.items():
        typer.echo(f"  not admitted {name}: {reason}")


@app.command("check")
def check(
    data: Annotated[Path, typer.Option("--data", help="A data set with ground truth (CLEVR scenes, a generated "
                                       "benchmark) whose scenes the helpers are checked on.")],
    split: Annotated[str | None, typer.Option("--split", help="Its split (default: the only one).")] = None,
    retire: Annotated[bool, typer.Option("--retire", help="Retire the helpers that fail (history kept).")] = False,
    config: ConfigOption = None, assignments: SetOption = None,
) -> None:
    """Check every helper against the ground truth its name claims (relations, heights, distances)."""
    import functools

    from vadar.library.truth_checks import TruthChecks, recheck_library
    from vadar.sandbox import execute

    settings, prepared = _prepare(data, split, config, assignments)
    limits = settings.sandbox
    checks = TruthChecks(functools.partial(execute, timeout_s=limits.timeout_s, memory_mb=limits.memory_mb,
                                           max_stdout_chars=limits.max_stdout_chars))
    with _open_store(settings.paths.database) as store:
        results = recheck_library(store, checks, prepared.dataset, prepared.modules, prepared.questions,
                                  retire=retire)
        retired = {d.name for d in store.decisions() if d.decision == "retired" and d.mode == "truth-check"}
    for name, result in results.items():
        if result.passed is None:
            verdict = "no checkable claim" if result.claim is None else f"{result.claim}: no case to check"
        else:
            verdict = f"{result.claim}: {'passed' if result.passed else 'FAILED'} ({result.cases} cases)"
        typer.echo(f"{name}: {verdict}" + (f"  {result.failures[0]}" if result.failures else "")
                   + ("  retired" if retire and name in retired else ""))
    if not results:
        typer.echo("the library has no implemented helper")


@app.command("track")
def track(
    run: Annotated[Path, typer.Argument(help="A vadar evaluation's run directory.", exists=True, file_okay=False)],
    baseline: Annotated[Path, typer.Option("--baseline", help="A run without the library on the same questions "
                                           "(e.g. static-api).", exists=True, file_okay=False)],
    db: DbOption = None, assignments: SetOption = None,
) -> None:
    """Compare each helper's programs in RUN with BASELINE on the same questions; retire those that did worse."""
    from vadar.library.tracking import track_evaluation
    from vadar.runs.results import ResultsFile

    from vadar.runs.storage import StorageError

    try:
        results = ResultsFile(run / "results.jsonl").read()
        paired = {r.question_id: r for r in ResultsFile(baseline / "results.jsonl").read()}
    except StorageError as exc:  # a results.jsonl line that is no record
        raise _fail(str(exc)) from exc
    settings = _settings(None, assignments)
    with _open_store(db if db is not None else settings.paths.database) as store:
        min_uses = settings.library.retire_min_uses
        retired = track_evaluation(store, results, run=str(run), baseline=paired, min_uses=min_uses)
        evaluated = {d.name: d.evidence for d in store.decisions() if d.decision == "evaluated"
                     and d.evidence.get("run") == str(run)}
    for name, evidence in evaluated.items():
        typer.echo(f"{name}: {_evaluation(evidence)}" + (f"  retired: {retired[name]}" if name in retired else ""))
    if not evaluated:
        typer.echo(f"no program of {run} calls a library function")
