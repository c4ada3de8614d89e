"""`vadar run`, `vadar eval`, `vadar build-api`: the main jobs, thin over `vadar.runs.pipeline`."""

from __future__ import annotations

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
    SetOption,
    SizePriorsOption,
    SplitOption,
    TestsOption,
    apply_executor,
    apply_module_choice,
    apply_reasoning,
    load_settings,
)
from vadar.app import open as open_vadar
from vadar.config import VadarConfig
from vadar.runs.evaluation import EvalSummary
from vadar.runs.executors.cluster import open_cluster
from vadar.runs.methods import METHODS
from vadar.runs.pipeline import SCOPES, BatchReport
from vadar.runs.validation import ValidationReport
from vadar.runs.prepare import DataSelection
from vadar.runs.progress import LiveProgress
from vadar.runs.session import open_session
from vadar.text import one_line

console = Console()


def _print_batch(report: BatchReport) -> None:
    if report.skipped:
        console.print(f"batch {report.index + 1}: already built, skipped")
        return
    console.print(f"[bold]batch {report.index + 1}[/bold] ({len(report.question_ids)} questions): "
                  f"proposed {len(report.proposed)}, implemented {len(report.implemented)} "
                  f"in {report.attempts} replies, failed {len(report.failed)}"
                  + (f", reused {len(report.reused)}" if report.reused else ""))
    for name in report.implemented:
        console.print(f"  + {name}")
    for name in report.reused:
        console.print(f"  + {name} (rejected before for lack of evidence; judged again on these questions)")
    for name, search in report.searches.items():
        verdict = (f"sample {search.passed[0]} passed" if search.passed else "no sample passed")
        console.print(f"  searched {name} ({search.claim}): {verdict} of {search.samples} sampled, "
                      f"{search.cases} ground-truth cases, {search.rounds} round(s)", highlight=False, markup=False)
    if report.admitted or report.not_admitted:
        console.print(f"  admitted {len(report.admitted)} of {len(report.admitted) + len(report.not_admitted)} "
                      "after checking answers on the batch"
                      + (f" ({len(report.repaired)} repaired once)" if report.repaired else ""))
    for name, reason in report.not_admitted.items():
        console.print(f"  - not admitted {name}: {reason}", highlight=False)
    for name, reason in report.failed.items():
        console.print(f"  x {name}: {one_line(reason, 200)}", highlight=False, markup=False)
    if report.failed:
        console.print("  [dim]full errors: vadar library show NAME[/dim]", highlight=False)
    for line in dict.fromkeys(report.rejected):  # small models repeat themselves
        console.print(f"  - rejected {one_line(line, 200)}", highlight=False, markup=False)


def _print_validation(report: ValidationReport) -> None:
    references = "gold answers" if report.labelled else "agreement of two static-api programs (unlabelled)"
    console.print(f"[bold]validation[/bold] on {report.judged} of {len(report.questions)} held-back build "
                  f"questions (references: {references})")
    for index, round_ in enumerate(report.rounds, 1):
        gone = [*round_.retired, *(f"example #{i}" for i in round_.withdrawn)]
        console.print(f"  round {index}: vadar {round_.vadar:g}, static-api {round_.static:g}"
                      + ("" if round_.passed or not gone else
                         f"; withdrawn{' (everything)' if round_.everything else ''}: {', '.join(gone)}"),
                      highlight=False, markup=False)


def _print_summary(summary: EvalSummary, out_dir: Path) -> None:
    console.print()
    console.print(summary.to_markdown(), highlight=False, markup=False)
    console.print(f"results: {out_dir / 'results.jsonl'}   summary: {out_dir / 'summary.md'}")


def _settings(config: Path | None, assignments: list[str] | None, modules: str | None, module: list[str] | None,
              *, executor: str | None = None, address: str | None = None, jobs: int | None = None,
              keep_going: bool = False) -> tuple[VadarConfig, dict[str, str]]:
    """The configuration with `--set` and the command's options applied, and the `--module` overrides."""
    settings = load_settings(config, assignments)
    apply_executor(settings, executor, address)
    overrides = apply_module_choice(settings, modules, module)
    _apply_jobs(settings, jobs, keep_going)
    return settings, overrides


def _apply_jobs(settings: VadarConfig, jobs: int | None, keep_going: bool = False) -> None:
    if jobs is not None:
        settings.eval.jobs = jobs
    if keep_going:
        settings.eval.keep_going = True


def build_api_command(
    data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    batch_size: BatchSizeOption = 10, batches: BatchesOption = None,
    modules: ModulesOption = None, module: ModuleOption = None,
    out: OutOption = None, config: ConfigOption = None, assignments: SetOption = None,
) -> None:
    """Grow the library: Signature agent then API agent, batch after batch."""
    with user_errors():
        settings, overrides = _settings(config, assignments, modules, module)
        with LiveProgress(console) as progress, open_vadar(settings, modules=overrides, progress=progress) as v:
            built = v.build(data, split=split, limit=limit, batch_size=batch_size, batches=batches, out=out,
                            on_batch=_print_batch, on_validation=_print_validation)
        console.print(f"library: {built.functions} implemented functions in {settings.paths.database}")


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
    tests: TestsOption = None, size_priors: SizePriorsOption = None, assignments: SetOption = None,
) -> None:
    """Answer questions with one method; write results.jsonl and a summary."""
    with user_errors():
        method = method if library else "static-api"
        if method not in METHODS:
            raise typer.BadParameter(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
        if questions not in SCOPES:
            raise typer.BadParameter(f"unknown --questions {questions!r}; choose one of: {', '.join(SCOPES)}")
        settings, overrides = _settings(config, assignments, modules, module, executor=executor, address=address,
                                        jobs=jobs, keep_going=keep_going)
        apply_reasoning(settings, samples, formalize, reflect, tests, size_priors)
        with LiveProgress(console) as progress, open_vadar(settings, modules=overrides, progress=progress) as v:
            evaluation = v.evaluate(data, method=method, split=split, limit=limit, skip=skip,
                                    families=family or (), questions=questions, out=out)
        _print_summary(evaluation.summary, evaluation.out_dir)


def run_command(
    data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    batch_size: BatchSizeOption = 10,
    batches: Annotated[int, typer.Option(
        "--batches", min=1, help="Batches to build the API from (at most half the questions).")] = 3,
    modules: ModulesOption = None, module: ModuleOption = None,
    out: OutOption = None, config: ConfigOption = None, jobs: JobsOption = None,
    executor: ExecutorOption = None, address: AddressOption = None, keep_going: KeepGoingOption = False,
    samples: SamplesOption = None, formalize: FormalizeOption = None, reflect: ReflectOption = None,
    tests: TestsOption = None, size_priors: SizePriorsOption = None, assignments: SetOption = None,
) -> None:
    """Build the API from the first batches, then answer the other questions with it (the main job)."""
    with user_errors():
        settings, overrides = _settings(config, assignments, modules, module, executor=executor, address=address,
                                        jobs=jobs, keep_going=keep_going)
        apply_reasoning(settings, samples, formalize, reflect, tests, size_priors)
        with LiveProgress(console) as progress, open_vadar(settings, modules=overrides, progress=progress) as v:
            evaluation = v.run(data, split=split, limit=limit, batch_size=batch_size, batches=batches, out=out,
                               on_batch=_print_batch, on_validation=_print_validation)
        _print_summary(evaluation.summary, evaluation.out_dir)


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
    assignments: SetOption = None,
) -> None:
    """Score a run again from its stored answers under today's scoring rules; no program runs again."""
    from vadar.runs.evaluation import rescore_run

    with user_errors():
        settings = load_settings(config, assignments)
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
    executor: ExecutorOption = None, address: AddressOption = None, assignments: SetOption = None,
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
        settings = load_settings(config, assignments)
        apply_executor(settings, executor, address)
        _apply_jobs(settings, jobs)
        with (LiveProgress(console) as progress, open_session(settings, progress=progress) as session,
              open_cluster(settings, announce=progress.announce) as cluster):
            report = run_ablation(session, selection, out_dir, entries, method=method, cluster=cluster)
        md_path, csv_path, png_path = write_report(report, out_dir)
    console.print(md_path.read_text(encoding="utf-8"), highlight=False, markup=False)
    console.print(f"table: {md_path}   csv: {csv_path}   chart: {png_path}")
