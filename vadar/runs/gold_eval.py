"""Score gold programs run through the oracle modules against the gold answers of a split.

A perfect score says modules, data adapter and metric agree; each mismatch is kept with the
program's output (or the error it raised) so that its cause can be read off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from base_modules.module import ModuleError
from base_modules.oracle.annotations3d import annotations3d_oracle_modules
from base_modules.oracle.clevr import clevr_oracle_modules
from base_modules.oracle.scene_graph import scene_graph_oracle_modules
from omni3d_bench.datasets.bench import BenchDataset
from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.datasets.view_programs import view_gold_program
from omni3d_bench.datasets.warehouse_programs import warehouse_gold_program
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Question, question_views
from vadar.programs.namespace import program_namespace
from vadar.sandbox import execute
from omni3d_bench.datasets.clevr_module_world import run_gold_program
from omni3d_bench.datasets.clevr_programs import ProgramError


@dataclass(frozen=True)
class GoldOutcome:
    """One question: the gold answer, what the gold program produced, and its score."""

    question: Question
    prediction: str
    score: float

    @property
    def error(self) -> bool:
        return self.prediction.startswith("error: ")


@dataclass
class GoldReport:
    outcomes: list[GoldOutcome] = field(default_factory=list)
    skipped: int = 0  # questions without a gold program or gold answer

    @property
    def count(self) -> int:
        return len(self.outcomes)

    @property
    def accuracy(self) -> float:
        return sum(o.score for o in self.outcomes) / self.count if self.outcomes else 0.0

    @property
    def mismatches(self) -> list[GoldOutcome]:
        return [o for o in self.outcomes if o.score < 1.0]


def evaluate_gold(
    dataset: ClevrDataset,
    questions: Iterable[Question],
    on_step: Callable[[], None] | None = None,
) -> GoldReport:
    """Run every question's gold program on CLEVR oracle modules built from `dataset`'s scenes.

    Dataset errors (a missing image file) propagate: they are data faults, not module results.
    """
    modules = clevr_oracle_modules(dataset.scene).as_namespace()
    report = GoldReport()
    for question in questions:
        if question.gold_program is None or question.answer is None:
            report.skipped += 1
        else:
            image = dataset.image(question)
            try:
                prediction = run_gold_program(question.gold_program, image, modules)
            except (ModuleError, ProgramError) as exc:
                prediction = f"error: {exc}"
            score = score_answer(prediction, question.answer, question.answer_type, question.metric)
            report.outcomes.append(GoldOutcome(question, prediction, score))
        if on_step is not None:
            on_step()
    return report


def evaluate_view_gold(
    dataset: BenchDataset,
    questions: Iterable[Question],
    on_step: Callable[[], None] | None = None,
) -> GoldReport:
    """Run each multi-view or warehouse question's gold program in the sandbox on the oracle
    modules (the five per frame, the scene graph, and the region tools of a question with
    regions) of a generated benchmark, scoring by the question's metric."""
    modules = annotations3d_oracle_modules(dataset.scene)
    view_modules = scene_graph_oracle_modules(dataset.scene, dataset.world)
    report = GoldReport()
    for question in questions:
        program = view_gold_program(question) or warehouse_gold_program(question)
        if program is None or question.answer is None:
            report.skipped += 1
        else:
            views = question_views(dataset, question)
            result = execute(program, program_namespace(views[0], modules, regions=question.regions,
                                                         views=views, view_modules=view_modules))
            prediction = result.value if result.ok else f"error: {result.error or result.infrastructure_error}"
            score = score_answer(prediction, question.answer, question.answer_type, question.metric)
            report.outcomes.append(GoldOutcome(question, str(prediction), score))
        if on_step is not None:
            on_step()
    return report
