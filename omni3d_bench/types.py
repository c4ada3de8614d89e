"""The question record every dataset adapter yields, and the dataset protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from base_modules.types import Image, Region

AnswerType = Literal["int", "float", "str"]


class DatasetError(ValueError):
    """The data set on disk is missing or malformed; the message names the file and field."""


@dataclass(frozen=True)
class Question:
    """One question about one image, with its gold answer.

    `gold_program` (CLEVR's functional program) is ground truth for module checks only; it is
    never shown to an agent.
    """

    question_id: str
    question: str
    answer: str | None
    answer_type: AnswerType
    image_id: str
    image_path: Path
    split: str
    source: str
    gold_program: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    metric: str | None = None
    """A metric of `omni3d_bench.metrics.METRICS` (e.g. "acc@10"); None scores by answer type."""
    regions: tuple[Region, ...] = ()
    """The regions the question points at, named as its text names them (omni3d_bench.regions)."""
    view_ids: tuple[str, ...] = ()
    """Ordered frames of one scene the question is about (the first is `image_id`); empty for a
    single-image question."""
    view_paths: tuple[Path, ...] = ()
    scene_id: str | None = None
    """The multi-view scene, whose world annotation the 3D scene-graph oracle reads."""

    @property
    def multi_view(self) -> bool:
        return len(self.view_ids) > 1

    @property
    def scene_key(self) -> str:
        """The scene the question is about: its multi-view scene, else its image. Build and test
        are split by this key, so no scored question looks at a scene the library was built on."""
        return self.scene_id or self.image_id

    @property
    def family(self) -> str | None:
        """The question's family, for per-family tables and `--family`: the generator's `family`,
        or CLEVR's template name (its family index when the template is not recorded)."""
        metadata = self.metadata or {}
        if metadata.get("family"):
            return str(metadata["family"])
        template = metadata.get("template_filename")
        if template:
            return Path(str(template)).stem
        if metadata.get("question_family_index") is not None:
            return f"family {metadata['question_family_index']}"
        return None


class Dataset(Protocol):
    """A question set on disk: questions per split, and per-image annotations for oracles."""

    name: str
    root: Path

    def splits(self) -> list[str]: ...

    def questions(self, split: str) -> list[Question]: ...

    def scene(self, image_id: str) -> dict[str, Any] | None: ...

    def image(self, question_or_image_id: Question | str) -> Image: ...


def question_views(dataset: Dataset, question: Question) -> list[Image]:
    """The frames a question is about, in order: its views, or its one image."""
    if not question.view_ids:
        return [dataset.image(question)]
    return [dataset.image(view_id) for view_id in question.view_ids]
