"""`vadar run`, `vadar eval`, `vadar build-api`, `vadar compare`, `vadar rescore`, `vadar ablate`:
the main jobs, each one call of the Python API (`Vadar.run`, `.evaluate`, `.build`, ...)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from vadar.app import LiveProgress, Vadar
from vadar.app import open as open_vadar
from vadar.cli.errors import user_errors
from vadar.cli.options import (EXECUTION, MODULES, REASONING, BatchesOption, BatchSizeOption, DataOption,
                               FamilyOption, LimitOption, MethodOption, OutOption, ShapeOption, SkipOption,
                               SplitOption, SpreadOption, settings_flags)
from vadar.config import VadarConfig
from vadar.text import one_line

if TYPE_CHECKING:
    from vadar.app.evaluation import BatchReport, EvalSummary, ShapeReport, ValidationReport
    from vadar.library.validation import ValidationRound

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
        if search.outcome is not None and not search.outcome.searched:
            console.print(f"  not searched {name}: programs on {search.outcome.support} build questions called it"
                          f"{search.outcome.weighing}, fewer than {search.outcome.minimum}",
                          highlight=False, markup=False)
            continue
        verdict = (f"sample {search.passed[0]} passed" if search.passed
                   else f"sample {search.kept} kept as the best" if search.kept else "no sample passed")
        cases = "build questions judged by their answers" if search.outcome is not None else "ground-truth cases"
        console.print(f"  searched {name} ({search.claim}): {verdict} of {search.samples} sampled, "
                      f"{search.cases} {cases}, {search.rounds} round(s)", highlight=False, markup=False)
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
    if report.from_queue:
        console.print(f"  from the queue (cut by an earlier batch's cap): {', '.join(report.from_queue)}",
                      highlight=False, markup=False)
    if report.queued:
        console.print(f"  waiting for the next batch: {', '.join(report.queued)}", highlight=False, markup=False)
    if report.signature_skipped:
        console.print("  every step of these questions is covered and nothing waits: no proposals asked")
    if report.shapes is not None:
        _print_shapes(report.shapes)
    if report.coverage is not None:
        console.print(f"  {report.coverage.line()}", highlight=False, markup=False)


def _print_shapes(report: ShapeReport) -> None:
    for name in report.proposed:
        support = (f"; programs for {report.support[name]} of them called it" if name in report.support else "")
        verdict = ("admitted" if name in report.admitted else f"not admitted: {report.not_admitted[name]}"
                   if name in report.not_admitted else f"failed: {one_line(report.failed[name], 160)}"
                   if name in report.failed else "not judged")
        console.print(f"  question-shape helper {name} ({report.questions[name]} build questions of its shape"
                      f"{support}): {verdict}", highlight=False, markup=False)


def _print_validation(report: ValidationReport) -> None:
    references = "gold answers" if report.labelled else "agreement of two static-api programs (unlabelled)"
    how = (f"leave-one-batch-out over {report.batches} batches" if report.rule == "leave-one-batch-out"
           else "in-sample: one batch, nothing to leave out")
    console.print(f"[bold]validation[/bold] ({how}) on {report.answered_text()} "
                  f"(references: {references}): {report.decision}")
    for index, round_ in enumerate(report.rounds, 1):
        gone = [*round_.retired, *(f"example #{i}" for i in round_.withdrawn)]
        bound = "at most " if round_.assumed else ""
        console.print(f"  round {index}: vadar {round_.vadar:g}, static-api {bound}{round_.static:g} on {round_.questions} "
                      f"questions ({bound and 'at least '}{round_.won} won, {round_.lost} lost, one-sided sign test p "
                      f"{round_.behind_p:.2f}, withdrawing at {round_.level:g} or less)"
                      + ("" if not gone else
                         f"; withdrawn{_withdrawn_how(round_)}: {', '.join(gone)}"),
                      highlight=False, markup=False)
        if round_.assumed:
            console.print(f"    static-api not asked on {round_.assumed} questions vadar got right (a tie at most "
                          f"there, which changes no decision)", highlight=False, markup=False)
        if round_.differing:
            console.print(f"    vadar against static-api where they differ: {round_.differing_text()}",
                          highlight=False, markup=False)


def _withdrawn_how(round_: ValidationRound) -> str:
    """How much a round withdrew, where it was more than what lost on its own."""
    if round_.everything:
        return " (everything)"
    if round_.spared:
        gone = "example" if round_.spared == "helpers" else "helper"
        return f" (every {gone}; the {round_.spared} stay: no question lost used one)"
    return ""


def _print_summary(summary: EvalSummary, out_dir: Path) -> None:
    console.print()
    console.print(summary.to_markdown(), highlight=False, markup=False)
    console.print(f"results: {out_dir / 'results.jsonl'}   summary: {out_dir / 'summary.md'}")


def _opened(settings: VadarConfig, progress: LiveProgress) -> Vadar:
    return open_vadar(settings, progress=progress)


@settings_flags(*MODULES)
def build_api_command(
    settings: VadarConfig, data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    skip: SkipOption = 0, spread_over: SpreadOption = None, batch_size: BatchSizeOption = 10,
    batches: BatchesOption = None, out: OutOption = None,
) -> None:
    """Grow the library: Signature agent then API agent, batch after batch."""
    with user_errors(), LiveProgress(console) as progress, _opened(settings, progress) as v:
        built = v.build(data, split=split, limit=limit, skip=skip, spread_over=spread_over, batch_size=batch_size,
                        batches=batches, out=out, on_batch=_print_batch, on_validation=_print_validation)
    console.print(f"library: {built.functions} implemented functions in {settings.paths.database}")
    if built.coverage is not None:
        console.print(f"{built.coverage.line()} (at the end: {built.out_dir / 'coverage.json'})",
                      highlight=False, markup=False)
    if built.cost is not None:
        console.print(f"{built.cost.line()} (by stage: {built.out_dir / 'build_cost.json'})",
                      highlight=False, markup=False)


@settings_flags(*MODULES, *EXECUTION, "keep_going", *REASONING)
def eval_command(
    settings: VadarConfig, data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    skip: SkipOption = 0, family: FamilyOption = None, shape: ShapeOption = None, method: MethodOption = "vadar",
    library: Annotated[bool, typer.Option(
        "--library/--no-library", help="Shorthand: --no-library is --method static-api.")] = True,
    out: OutOption = None,
    questions: Annotated[str, typer.Option(
        "--questions", help="held-out (default: never a question the library was built from), "
        "build (only those) or all.")] = "held-out",
) -> None:
    """Answer questions with one method; write results.jsonl and a summary."""
    with user_errors(), LiveProgress(console) as progress, _opened(settings, progress) as v:
        evaluation = v.evaluate(data, method=method if library else "static-api", split=split, limit=limit,
                                skip=skip, families=family or (), shapes=shape or (), questions=questions,
                                out=out)
    _print_summary(evaluation.summary, evaluation.out_dir)


@settings_flags(*MODULES, *EXECUTION, "keep_going", *REASONING)
def run_command(
    settings: VadarConfig, data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    batch_size: BatchSizeOption = 10,
    batches: Annotated[int, typer.Option(
        "--batches", min=1, help="Batches to build the API from (at most half the questions).")] = 3,
    out: OutOption = None,
) -> None:
    """Build the API from the first batches, then answer the other questions with it (the main job)."""
    with user_errors(), LiveProgress(console) as progress, _opened(settings, progress) as v:
        evaluation = v.run(data, split=split, limit=limit, batch_size=batch_size, batches=batches, out=out,
                           on_batch=_print_batch, on_validation=_print_validation)
    _print_summary(evaluation.summary, evaluation.out_dir)


def compare_command(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (or their summary.json files).")],
    output: Annotated[Path | None, typer.Option("--output", help="Also write the table to this file.")] = None,
) -> None:
    """Print the summaries of several runs side by side (markdown)."""
    with user_errors():
        table = Vadar.compare(runs, output)
    console.print(table, highlight=False, markup=False, soft_wrap=True)


@settings_flags()
def rescore_command(
    settings: VadarConfig,
    run: Annotated[Path, typer.Argument(help="A run directory of `vadar eval`.", exists=True, file_okay=False)],
    data: DataOption = None, split: SplitOption = None,
) -> None:
    """Score a run again from its stored answers under today's scoring rules; no program runs again."""
    with user_errors(), open_vadar(settings, quiet=True) as v:
        summary, changed = v.rescore(run, data, split=split)
    typer.echo(f"{changed} of {summary.questions} scores changed")
    _print_summary(summary, run)


@settings_flags(*EXECUTION)
def ablate_command(
    settings: VadarConfig, data: DataOption = None, split: SplitOption = None, limit: LimitOption = None,
    grid: Annotated[list[str] | None, typer.Option(
        "--grid", help="Configuration, repeatable: real, oracle, or BASE+slot=backend[,slot=backend] "
        "(e.g. real+depth=oracle). Default: all real, all oracle, each module alone oracle.")] = None,
    method: MethodOption = "vadar", out: OutOption = None,
) -> None:
    """Run the same questions under several module configurations; table, CSV and bar chart.

    With --executor ray the configurations run at once on the cluster."""
    with user_errors(), LiveProgress(console) as progress, _opened(settings, progress) as v:
        ablation = v.ablate(data, split=split, limit=limit, grid=grid or (), method=method, out=out)
    console.print(ablation.table.read_text(encoding="utf-8"), highlight=False, markup=False)
    console.print(f"table: {ablation.table}   csv: {ablation.csv}   chart: {ablation.chart}")
