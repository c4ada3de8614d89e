"""One build batch as the library's routes see it: one frozen object instead of long argument lists.

The run (`vadar.runs.build`) makes it once per batch from its session and data; every route of
the batch (proposals, admission) reads what it needs from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from api_store import ApiStore
from base_modules.module import ModuleSet
from base_modules.view_modules import ViewModuleSet
from omni3d_bench.types import Dataset, Question
from vadar.agents.api import TestContext
from vadar.agents.program import ProgramAgent
from vadar.config import AgentsConfig, LibraryConfig
from vadar.llm.chat import ChatModel
from vadar.programs.outcome import Executor
from vadar.programs.question_context import QuestionContext
from vadar.programs.sampling import Sampling


def _silent(message: str) -> None:
    return None


@dataclass(frozen=True)
class BuildBatch:
    """What one batch of a build is given: the store and the models, the questions, the settings.

    `questions` are the batch's own; `built_from` every build question up to and including this
    batch (what the bottom-up routes and the aims learn from); `scenes` the questions of every
    batch built, never one `--batches` leaves out (ground-truth cases come from their scenes
    only); `earlier` the questions earlier build runs of this library were shown (the question-shape
    route counts them as support, so a library grown in a second run sees its first). `writer`
    makes the Program agent the run configured, with the sampling asked for.
    """

    store: ApiStore
    llm: ChatModel
    executor: Executor
    dataset: Dataset
    modules: ModuleSet
    questions: tuple[Question, ...]
    built_from: tuple[Question, ...]
    scenes: tuple[Question, ...]
    index: int
    run_id: int
    batch_id: int
    model: str | None
    settings: LibraryConfig
    limits: AgentsConfig
    writer: Callable[[Sampling], ProgramAgent]
    on_event: Callable[[str], None] = _silent
    earlier: tuple[Question, ...] = ()
    view_modules: ViewModuleSet | None = None  # where some question is about several frames

    @property
    def context(self) -> QuestionContext:
        """What a program for one of the batch's questions runs with and is told."""
        return QuestionContext(self.dataset, self.modules, self.view_modules)

    @property
    def api_options(self) -> dict[str, Any]:
        """The `render_api` options the Signature and API agents see: where a question of the batch is
        about several frames, `views` and the multi-view modules (a helper may take the frames)."""
        several = next((q for q in self.questions if q.multi_view), None)
        return self.context.api_options(several) if several else {}

    def test_contexts(self, questions: Sequence[Question]) -> list[TestContext]:
        """Real inputs to test an implementation on: each question's namespace as its programs get it
        (for several frames, `views` and the multi-view modules too)."""
        context, words = self.context, getattr(self.dataset, "example_words", {})
        return [TestContext(q.question, context.namespace(q), words) for q in questions]

    @property
    def provenance(self) -> dict[str, Any]:
        """What every version and attempt this batch stores points back to."""
        return {"run_id": self.run_id, "batch_id": self.batch_id, "model": self.model}
