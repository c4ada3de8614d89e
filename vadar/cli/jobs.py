"""`vadar run`, `vadar eval`, `vadar build-api`: the main jobs, thin over `vadar.runs.pipeline`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from vadar.cli.errors import print_error, user_errors
from vadar.cli.options import (
    AddressOption,
    BatchesOption,
    BatchSizeOption,
    KeepGoingOption,
    FamilyOption,
    SkipOption,
    ConfigOption,
    DataOption,
    ExecutorOption,
    FormalizeOption,
    JobsOption,
    LibraryOption,
    LimitOption,
    MethodOption,
    ModuleOption,
    ModulesOption,
    OutOption,
    ReflectOption,
    SamplesOption,
    SizePriorsOption,
    SplitOption,
    TestsOption,
    apply_executor,
    apply_module_choice,
    apply_reasoning,
    modules_label,
)
from vadar.config import VadarConfig, load_config
from vadar.runs.evaluation import EvalSummary
from vadar.runs.executors.cluster import open_cluster
from vadar.runs.methods import METHODS
from vadar.runs.pipeline import SCOPES, BatchReport, build_api, evaluate
from vadar.runs.prepare import DataSelection, PreparedData
from vadar.runs.progress import LiveProgress
from vadar.runs.session import Session, open_session
from vadar.text import one_line

console = Console()


def _config(path: Path | None) -> VadarConfig:
    return load_config(path)


def _run_dir(out: Path | None, selection: DataSelection, prepared: PreparedData, method: str) -> Path:
    if out is not None:
        return out
    data = selection.data.resolve().name if selection.data else "sample"
    label = modules_label(prepared.backends)
    return Path("runs") / "-".join(filter(None, [data, prepared.split, method, label]))


def _print_batch(report: BatchReport) -> None:
    if report.skipped:
        console.print(f"batch {report.index + 1}: already built, skipped")
        return
    console.print(f"[bold]batch {report.index + 1}[/bold] ({len(report.question_ids)} questions): "
                  f"proposed {len(report.proposed)}, implemented {len(report.implemented)}, "
                  f"failed {len(report.failed)}")
    for name in report.implemented:
        console.print(f"  + {name}")
    if report.admitted or report.not_admitted:
        console.print(f"  admitted {len(report.admitted)} of {len(report.admitted) + len(report.not_admitted)} "
                      "after checking answers on the batch")
    for name, reason in report.not_admitted.items():
        console.print(f"  - not admitted {name}: {reason}", highlight=False)
    for name, reason in report.failed.items():
        console.print(f"  x {name}: {one_line(reason, 200)}", highlight=False, markup=False)
    if report.failed:
        console.print(f"  [dim]full errors: vadar library show NAME[/dim]", highlight=False)
    for line in dict.fromkeys(report.rejected):  # small models repeat themselves
        console.print(f"  - rejected {one_line(line, 200)}", highlight=False, markup=False)


def _print_summary(summary: EvalSummary, out_dir: Path) -> None:
    console.print()
    console.print(summary.to_markdown(), highlight=False, markup=False)
    console.print(f"results: {out_dir / 'results.jsonl'}   summary: {out_dir / 'summary.md'}")


def _prepared(data: Path | None, split: str | None, limit: int | None, config: Path | None,
              out: Path | None, method: str, modules: str | None = None,
              module: list[str] | None = None, skip: int = 0, executor: str | None = None,
              address: str | None = None, load: bool = True,
              families: list[str] | None = None) -> tuple[VadarConfig, PreparedData, Path]:
    """Configuration, checked questions and run directory: everything before the LLM starts.

    Models load here unless they will be served by Ray actors (`load=False` with `--executor ray`).
    """
    selection = DataSelection(data, split, limit, skip, tuple(families or ()))
    settings = _config(config)
    apply_executor(settings, executor, address)
    overrides = apply_module_choice(settings, modules, module)
    prepared = selection.prepare(settings, overrides=overrides, load=load or settings.eval.executor != "ray")
    return settings, prepared, _run_dir(out, selection, prepared, method)


def _build(session: Session, prepared: PreparedData, out_dir: Path, batch_size: int, batches: int | None) -> None:
    session.progress.stage("building the API")
    build_api(session, prepared, out_dir, batch_size=batch_size, batches=batches, on_batch=_print_batch)


def _apply_jobs(settings: VadarConfig, jobs: int | None, keep_going: bool = False) -> None:
    if jobs is not None:
        settings.eval.jobs = jobs
    if keep_going:
        settings.eval.keep_going = True


def _how(settings: VadarConfig) -> str:
    if settings.eval.executor == "ray":
        return "tasks on Ray"
    return f"{settings.eval.jobs} at once"


def build_api_command(
    data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    batch_size: BatchSizeOption = 10, batches: BatchesOption = None,
    modules: ModulesOption = None, module: ModuleOption = None,
    out: OutOption = None, config: ConfigOption = None,
) -> None:
    """Grow the library: Signature agent then API agent, batch after batch."""
    with user_errors():
        settings, prepared, out_dir = _prepared(data, split, limit, config, out, "build", modules, module)
        with LiveProgress(console) as progress, open_session(settings, progress=progress) as session:
            _build(session, prepared, out_dir, batch_size, batches)
            total = len(session.store.functions("implemented"))
        console.print(f"library: {total} implemented functions in {settings.paths.database}")


def eval_command(
    data: DataOption = None, split: SplitOption = None, limit: LimitOption = None, skip: SkipOption = 0,
    family: FamilyOption = None, method: MethodOption = "vadar", library: LibraryOption = True,
    modules: ModulesOption = None, module: ModuleOption = None,
    out: OutOption = None, config: ConfigOption = None, jobs: JobsOption = None,
    executor: ExecutorOption = None, address: AddressOption = None, keep_going: KeepGoingOption = False,
    questions: Annotated[str, typer.Option(
        "--questions", help="held-out (default: never a question the library was built from), "
        "build (only those) or all.")] = "held-out",
    samples: SamplesOption = None, formalize: FormalizeOption = None, reflect: ReflectOption = None,
    tests: TestsOption = None, size_priors: SizePriorsOption = None,
) -> None:
    """Answer questions with one method; write results.jsonl and a summary."""
    with user_errors():
        method = method if library else "static-api"
        if method not in METHODS:
            raise typer.BadParameter(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
        if questions not in SCOPES:
            raise typer.BadParameter(f"unknown --questions {questions!r}; choose one of: {', '.join(SCOPES)}")
        settings, prepared, out_dir = _prepared(data, split, limit, config, out, method, modules, module, skip,
                                                executor, address, load=False, families=family)
        _apply_jobs(settings, jobs, keep_going)
        apply_reasoning(settings, samples, formalize, reflect, tests, size_priors)
        with (LiveProgress(console) as progress, open_session(settings, progress=progress) as session,
              open_cluster(settings, announce=progress.announce) as cluster):
            progress.stage(f"answering questions ({method}, {_how(settings)})")
            summary = evaluate(session, prepared, out_dir, method=method, scope=questions, cluster=cluster)
        _print_summary(summary, out_dir)


def run_command(
    data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    batch_size: BatchSizeOption = 10,
    batches: Annotated[int, typer.Option(
        "--batches", min=1, help="Batches to build the API from (at most half the questions).")] = 3,
    modules: ModulesOption = None, module: ModuleOption = None,
    out: OutOption = None, config: ConfigOption = None, jobs: JobsOption = None,
    executor: ExecutorOption = None, address: AddressOption = None, keep_going: KeepGoingOption = False,
    samples: SamplesOption = None, formalize: FormalizeOption = None, reflect: ReflectOption = None,
    tests: TestsOption = None, size_priors: SizePriorsOption = None,
) -> None:
    """Build the API from the first batches, then answer the other questions with it (the main job)."""
    with user_errors():
        settings, prepared, out_dir = _prepared(data, split, limit, config, out, "vadar", modules, module,
                                                executor=executor, address=address)
        _apply_jobs(settings, jobs, keep_going)
        apply_reasoning(settings, samples, formalize, reflect, tests, size_priors)
        build_questions = prepared.questions[:min(batches * batch_size, len(prepared.questions) // 2)]
        with (LiveProgress(console) as progress, open_session(settings, progress=progress) as session,
              open_cluster(settings, announce=progress.announce) as cluster):
            console.print(f"building the API from {len(build_questions)} questions; the other "
                          f"{len(prepared.questions) - len(build_questions)} are evaluated", highlight=False)
            _build(session, dataclasses.replace(prepared, questions=build_questions), out_dir, batch_size, None)
            progress.stage(f"answering questions ({_how(settings)})")
            summary = evaluate(session, prepared, out_dir, method="vadar", cluster=cluster)
        _print_summary(summary, out_dir)


def compare_command(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (or their summary.json files).")],
    output: Annotated[Path | None, typer.Option("--output", help="Also write the table to this file.")] = None,
) -> None:
    """Print the summaries of several runs side by side (markdown)."""
    from vadar.runs.compare import CompareError, comparison_table, load_summary
    from vadar.runs.storage import StorageError, writing

    try:
        table = comparison_table([load_summary(path) for path in runs])
    except (CompareError, StorageError) as exc:  # StorageError: a results.jsonl line that is no record
        print_error(exc)
        raise typer.Exit(code=1) from None
    console.print(table, highlight=False, markup=False, soft_wrap=True)
    if output is not None:
        with user_errors(), writing(output):
            output.write_text(table, encoding="utf-8")


def rescore_command(
    run: Annotated[Path, typer.Argument(help="A run directory of `vadar eval`.", exists=True, file_okay=False)],
    data: DataOption = None, split: SplitOption = None, config: ConfigOption = None,
) -> None:
    """Score a run again from its stored answers under today's scoring rules; no program runs again."""
    from vadar.runs.evaluation import rescore_run

    with user_errors():
        settings = load_config(config)
        prepared = DataSelection(data, split).prepare(settings)
        summary, changed = rescore_run(run, prepared.questions)
    typer.echo(f"{changed} of {summary.questions} scores changed")
    _print_summary(summary, run)


def ablate_command(
    data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    grid: Annotated[list[str] | None, typer.Option(
        "--grid", help="Configuration, repeatable: real, oracle, or BASE+slot=backend[,slot=backend] "
        "(e.g. real+depth=oracle). Default: all real, all oracle, each module alone oracle.")] = None,
    method: MethodOption = "vadar",
    out: OutOption = None, config: ConfigOption = None, jobs: JobsOption = None,
    executor: ExecutorOption = None, address: AddressOption = None,
) -> None:
    """Run the same questions under several module configurations; table, CSV and bar chart.

    With --executor ray the configurations run at once on the cluster."""
    from vadar.runs.ablation import GridError, default_grid, parse_grid_entry, run_ablation, write_report

    with user_errors():
        try:
            entries = [parse_grid_entry(g) for g in grid] if grid else default_grid()
        except GridError as exc:
            raise typer.BadParameter(str(exc)) from None
        if method not in METHODS:
            raise typer.BadParameter(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
        selection = DataSelection(data, split, limit)
        out_dir = out or Path("runs") / f"ablation-{selection.data.resolve().name if data else 'sample'}-{method}"
        settings = _config(config)
        apply_executor(settings, executor, address)
        _apply_jobs(settings, jobs)
        with (LiveProgress(console) as progress, open_session(settings, progress=progress) as session,
              open_cluster(settings, announce=progress.announce) as cluster):
            report = run_ablation(session, selection, out_dir, entries, method=method, cluster=cluster)
        md_path, csv_path, png_path = write_report(report, out_dir)
    console.print(md_path.read_text(encoding="utf-8"), highlight=False, markup=False)
    console.print(f"table: {md_path}   csv: {csv_path}   chart: {png_path}")
