"""Find each question's image and family from the data set a run was made on.

Rows record the image id and, inside module calls, the image path at the time of the run. The
data set may have moved since (another machine, a renamed directory), so the lookup tries the
data set first (recorded location or `--data`), then the recorded path, then the file name
under `--data`. Nothing here raises: an unknown image becomes a placeholder in the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base_modules.types import Region
from omni3d_bench.types import Question


@dataclass
class DataLookup:
    """Questions of the run's data set by id, and why the data set could not be read, if so."""

    root: Path | None
    questions: dict[str, Question] = field(default_factory=dict)
    problem: str | None = None

    @classmethod
    def open(cls, root: str | Path | None, split: str | None) -> DataLookup:
        if root is None:
            return cls(None, problem="the run does not record its data set; pass --data")
        root = Path(root)
        from omni3d_bench.datasets import load_dataset

        try:
            dataset = load_dataset(root)
            splits = dataset.splits()
            chosen = split if split in splits else (splits[0] if len(splits) == 1 else split)
            questions = dataset.questions(chosen) if chosen else []
        except Exception as exc:  # any adapter failure only costs images and families
            return cls(root, problem=f"cannot read the data set at {root}: {exc}")
        return cls(root, {q.question_id: q for q in questions})

    def family(self, question_id: str) -> str | None:
        """A question's family: the generator's `family`, or CLEVR's template name."""
        question = self.questions.get(question_id)
        return question.family if question is not None else None

    def regions(self, question_id: str) -> tuple[Region, ...]:
        """The regions a question points at (none when the data set is unknown)."""
        question = self.questions.get(question_id)
        return question.regions if question is not None else ()

    def image_path(self, row: dict[str, Any], frame: int | None = None) -> Path | None:
        """The first existing file among the data set's, the recorded one and one under the root
        (of frame number `frame` of a multi-view question when given)."""
        candidates: list[Path] = []
        question = self.questions.get(str(row.get("question_id")))
        if question is not None and frame is not None and frame < len(question.view_paths):
            candidates.append(Path(question.view_paths[frame]))
        elif question is not None:
            candidates.append(Path(question.image_path))
        recorded = recorded_image(row.get("module_calls") or [])
        if recorded.get("path"):
            candidates.append(Path(str(recorded["path"])))
        if self.root is not None and self.root.is_dir():
            names = [Path(str(recorded["path"])).name] if recorded.get("path") else []
            if row.get("image_id"):
                names.append(f"{row['image_id']}.png")
            candidates += [self.root / "images" / name for name in names]
        return next((path for path in candidates if path.is_file()), None)


def recorded_image(calls: list[Any]) -> dict[str, Any]:
    """The image handle the program passed to its first module call ({} when it made none)."""
    for call in calls:
        args = call.get("args") if isinstance(call, dict) else None
        if args and isinstance(args[0], dict) and "path" in args[0]:
            return args[0]
    return {}
