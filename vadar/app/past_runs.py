"""Work on runs already written: compare their summaries, score them again under today's rules,
write their HTML report, and check the data with gold programs. No LLM starts for any of these."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vadar.report import ReportResult, build_report
from vadar.runs.compare import comparison_table, load_summary
from vadar.runs.evaluation import EvalSummary, rescore_run
from vadar.runs.storage import writing

if TYPE_CHECKING:
    from vadar.runs.gold_eval import GoldReport
    from vadar.runs.prepare import PreparedData


def compare(runs: Sequence[Path], output: Path | None = None) -> str:
    """The summaries of several runs side by side as a markdown table (also written to `output`)."""
    table = comparison_table([load_summary(Path(path)) for path in runs])
    if output is not None:
        with writing(output):
            output.write_text(table, encoding="utf-8")
    return table


def rescore(run: Path, prepared: PreparedData) -> tuple[EvalSummary, int]:
    """The run scored again from its stored answers; how many scores changed."""
    return rescore_run(run, prepared.questions)


def report(run_dir: Path, out: Path | None = None, *, data: Path | None = None, db: Path | None = None,
           single_file: bool = False) -> ReportResult:
    """The static HTML report of a run or an ablation; a full or read-only target is one line."""
    from vadar.app.errors import cannot_write

    try:
        return build_report(run_dir, out, data=data, db=db, inline_images=single_file)
    except OSError as exc:
        raise cannot_write(exc, out or run_dir / "report") from None


def gold(data: Path | None, split: str | None, limit: int | None,
         on_question: Callable[[], None] | None = None, on_start: Callable[[int], None] | None = None) -> GoldReport:
    """Gold programs (CLEVR's, a generated benchmark's) run through the oracle modules and scored."""
    from omni3d_bench.datasets.bench import BenchDataset, is_bench_dir
    from omni3d_bench.datasets.clevr import ClevrDataset
    from omni3d_bench.sample import SAMPLE_SPLIT, sample_path
    from vadar.runs.gold_eval import evaluate_gold, evaluate_view_gold

    root = data if data is not None else sample_path()
    bench = is_bench_dir(root)
    split = split or (SAMPLE_SPLIT if data is None else "test" if bench else "dev")
    dataset = BenchDataset(root) if bench else ClevrDataset(root)
    evaluate = evaluate_view_gold if bench else evaluate_gold
    questions = dataset.questions(split)[:limit]
    if on_start is not None:
        on_start(len(questions))
    return evaluate(dataset, questions, on_question)  # type: ignore[arg-type]
