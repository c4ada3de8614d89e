"""What a program for one question runs with and is told, wherever it is written.

An evaluation's program for a question about several frames of one room gets the frames as
`views` and the multi-view modules (`objects_3d`, ...), and its API text says so. The build's
programs (the gate's with and without the candidates, the search by outcome's) once got the first
frame alone: a 30-question multi-view build stored `len(loc(image, "mug"))` as right for "How many
mugs are there in the room?", because the one mug stood in the first frame. Both now come from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from api_store import FunctionRecord
from base_modules.module import PREDEFINED_MODULES, ModuleSet
from base_modules.view_modules import VIEW_MODULES, ViewModuleSet
from omni3d_bench.types import Dataset, Question, question_views
from vadar import prompts
from vadar.programs.namespace import program_namespace


@dataclass(frozen=True)
class QuestionContext:
    """A data set's questions with the modules their programs call (`view_modules` where some
    question is about several frames: `runs.prepare.PreparedData.view_modules`)."""

    dataset: Dataset
    modules: ModuleSet
    view_modules: ViewModuleSet | None = None

    def namespace(self, question: Question, library: Iterable[FunctionRecord] = ()) -> dict[str, Any]:
        """What a program for `question` runs with: its image, or for several frames the frames as
        `views` (the first is `image`) and the multi-view modules; its regions; `library`."""
        if not question.multi_view:
            return program_namespace(self.dataset.image(question), self.modules, library, question.regions)
        views = question_views(self.dataset, question)
        return program_namespace(views[0], self.modules, library, question.regions, views=views,
                                 view_modules=self.view_modules)

    def api_options(self, question: Question) -> dict[str, Any]:
        """The `render_api` options describing that namespace: for several frames, `views` and the
        multi-view modules listed after the five."""
        if not question.multi_view:
            return {}
        across = VIEW_MODULES if self.view_modules is not None else ()
        return {"modules": PREDEFINED_MODULES + across, "views": True}

    def fixed_example(self, question: Question) -> str | None:
        """The worked example where no other is shown: for several frames with the multi-view
        modules, one reading them all (the built-in one reads one frame); else None (the built-in)."""
        if question.multi_view and self.view_modules is not None:
            return prompts.render("program_example_views")
        return None
