"""One build batch as the library's routes see it: one frozen object instead of long argument lists.

The run (`vadar.runs.build`) makes it once per batch from its session and data; every route of
the batch (proposals, admission) reads what it needs from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from api_store import ApiStore
from base_modules.module import ModuleSet
from base_modules.view_modules import ViewModuleSet
from omni3d_bench.types import Dataset, Question
from vadar.agents.program import ProgramAgent
from vadar.config import AgentsConfig, LibraryConfig
from vadar.llm.chat import ChatModel
from vadar.programs.outcome import Executor
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
    def provenance(self) -> dict[str, Any]:
        """What every version and attempt this batch stores points back to."""
        return {"run_id": self.run_id, "batch_id": self.batch_id, "model": self.model}
