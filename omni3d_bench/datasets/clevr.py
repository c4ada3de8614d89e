"""CLEVR-layout adapter: `questions/<split>.json`, `scenes/*.json`, `images/*.png`.

The scene annotations are what the oracle modules read, so every question must resolve to
its scene; a missing one is reported up front rather than as a wrong answer later.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from base_modules.types import Image
from omni3d_bench.datasets.tables import load_json
from omni3d_bench.images import image_handle
from omni3d_bench.question_checks import check_questions
from omni3d_bench.regions import region_fields
from omni3d_bench.types import AnswerType, DatasetError, Question
from omni3d_bench.relations import CLEVR_CONVENTIONS

REQUIRED_QUESTION_FIELDS = ("question", "image_index", "image_filename")


def read_json(path: Path) -> Any:
    """Parse a JSON file; CLEVR-layout files are generated, so a broken one is regenerated."""
    return load_json(path, remedy="Fix or regenerate the file.")


def is_int_string(answer: Any) -> bool:
    """True for gold answers such as "3" or "-2", which are scored as integers."""
    if not isinstance(answer, str):
        return isinstance(answer, int) and not isinstance(answer, bool)
    text = answer.strip()
    if text.startswith(("-", "+")):
        text = text[1:]
    return text.isdigit() and text.isascii()


def answer_type_of(answer: Any) -> AnswerType:
    """CLEVR answers are strings; integer strings are counts and get integer scoring."""
    return "int" if is_int_string(answer) else "str"


CLEVR_FOCAL_LENGTH = 525.0
CLEVR_WIDTH = 480


CLEVR_EXAMPLE_WORDS = {"color": "red", "shape": "cube", "material": "metal", "size": "large"}


class ClevrDataset:
    """A CLEVR-format question set rooted at `root`, parsed lazily and cached per instance."""

    example_words = CLEVR_EXAMPLE_WORDS
    """One value per attribute its modules understand, for test calls of new helpers."""

    conventions = CLEVR_CONVENTIONS
    """How its ground truth defines relations and measures (`omni3d_bench.relations`), in words a
    helper's implementation can follow."""

    def __init__(self, root: Path, name: str = "clevr") -> None:
        self.root = Path(root).resolve()
        self.name = name
        if not self.root.is_dir():
            raise DatasetError(
                f"CLEVR data directory not found: {self.root}. Pass the directory that holds "
                "questions/, scenes/ and images/."
            )
        self._questions: dict[str, list[Question]] = {}
        self._scenes_by_id: dict[str, dict[str, Any]] | None = None
        self._scenes_by_index: dict[int, dict[str, Any]] = {}
        self._handles: dict[str, Image] = {}

    @property
    def questions_dir(self) -> Path:
        return self.root / "questions"

    @property
    def scenes_dir(self) -> Path:
        return self.root / "scenes"

    @property
    def images_dir(self) -> Path:
        return self.root / "images"

    def splits(self) -> list[str]:
        """Split names, one per `questions/<split>.json` file."""
        if not self.questions_dir.is_dir():
            return []
        return sorted(p.stem for p in self.questions_dir.glob("*.json"))

    def questions(self, split: str) -> list[Question]:
        """All questions of `split`, validated against the scenes when scenes are present."""
        if split not in self._questions:
            self._questions[split] = self._load_questions(split)
        return list(self._questions[split])

    def scene(self, image_id: str) -> dict[str, Any] | None:
        """The CLEVR scene of `image_id` (filename stem), or None when not annotated."""
        self._load_scenes()
        assert self._scenes_by_id is not None
        return self._scenes_by_id.get(image_id)

    def image(self, question_or_image_id: Question | str) -> Image:
        """Handle for a question's image or an image id; raises if the file is missing/corrupt."""
        if isinstance(question_or_image_id, Question):
            image_id, path = question_or_image_id.image_id, question_or_image_id.image_path
        else:
            image_id = str(question_or_image_id)
            path = self.images_dir / f"{image_id}.png"
        if image_id not in self._handles:
            handle = image_handle(image_id, Path(path))
            focal = CLEVR_FOCAL_LENGTH * handle.width / CLEVR_WIDTH  # CLEVR's renderer camera
            self._handles[image_id] = image_handle(image_id, Path(path), focal_length=focal)
        return self._handles[image_id]

    # -- loading -------------------------------------------------------------------------

    def _load_scenes(self) -> None:
        if self._scenes_by_id is not None:
            return
        by_id: dict[str, dict[str, Any]] = {}
        by_index: dict[int, dict[str, Any]] = {}
        files = sorted(self.scenes_dir.glob("*.json")) if self.scenes_dir.is_dir() else []
        for path in files:
            data = read_json(path)
            scenes = data.get("scenes") if isinstance(data, dict) else None
            if not isinstance(scenes, list):
                raise DatasetError(
                    f"{path} has no 'scenes' list; a CLEVR scene file is "
                    '{"info": ..., "scenes": [...]}.'
                )
            for pos, scene in enumerate(scenes):
                if not isinstance(scene, dict) or "image_index" not in scene:
                    raise DatasetError(
                        f"{path}: scene #{pos} lacks the required field 'image_index'."
                    )
                if not isinstance(scene.get("objects"), list):
                    raise DatasetError(
                        f"{path}: scene #{pos} (image_index {scene['image_index']}) lacks an "
                        "'objects' list."
                    )
                by_index[int(scene["image_index"])] = scene
                filename = scene.get("image_filename")
                if filename:
                    by_id[Path(filename).stem] = scene
        self._scenes_by_id = by_id
        self._scenes_by_index = by_index

    def _scene_for(self, image_id: str, image_index: int) -> dict[str, Any] | None:
        self._load_scenes()
        assert self._scenes_by_id is not None
        return self._scenes_by_id.get(image_id) or self._scenes_by_index.get(image_index)

    def _load_questions(self, split: str) -> list[Question]:
        path = self.questions_dir / f"{split}.json"
        if not path.is_file():
            available = ", ".join(self.splits()) or "none"
            raise DatasetError(
                f"unknown split {split!r}: {path} does not exist. Available splits under "
                f"{self.questions_dir}: {available}."
            )
        data = read_json(path)
        raw = data.get("questions") if isinstance(data, dict) else None
        if not isinstance(raw, list):
            raise DatasetError(
                f"{path} has no 'questions' list; a CLEVR question file is "
                '{"info": ..., "questions": [...]}.'
            )
        self._load_scenes()
        have_scenes = bool(self._scenes_by_index)
        out: list[Question] = []
        seen: dict[str, int] = {}
        for pos, item in enumerate(raw):
            question = self._to_question(item, pos, split, path)
            if question.question_id in seen:
                raise DatasetError(
                    f"{path}: question #{pos} repeats question_index {question.question_id} "
                    f"(first used by question #{seen[question.question_id]}); ids must be unique."
                )
            seen[question.question_id] = pos
            if have_scenes:
                index = question.metadata["image_index"]
                if self._scene_for(question.image_id, index) is None:
                    raise DatasetError(
                        f"{path}: question #{pos} refers to image_index {index} "
                        f"({question.image_id}), which has no scene in {self.scenes_dir}. "
                        "Add its scene or remove the question."
                    )
                if question.image_id not in (self._scenes_by_id or {}):
                    # scenes without image_filename are matched by index; remember by id too
                    assert self._scenes_by_id is not None
                    self._scenes_by_id[question.image_id] = self._scenes_by_index[index]
            out.append(question)
        return check_questions(out, path)

    def _to_question(self, item: Any, pos: int, split: str, path: Path) -> Question:
        if not isinstance(item, dict):
            raise DatasetError(f"{path}: question #{pos} is not a JSON object.")
        for field in REQUIRED_QUESTION_FIELDS:
            if field not in item:
                raise DatasetError(
                    f"{path}: question #{pos} is missing the required field {field!r}."
                )
        text = item["question"]
        if not isinstance(text, str):
            raise DatasetError(f"{path}: question #{pos} has a 'question' of type {type(text).__name__}; it must be text.")
        if not text.strip():
            raise DatasetError(f"{path}: question #{pos} has an empty 'question' text.")
        try:
            image_index = int(item["image_index"])
        except (TypeError, ValueError) as exc:
            raise DatasetError(
                f"{path}: question #{pos} has a non-integer 'image_index' "
                f"{item['image_index']!r}."
            ) from exc
        filename = str(item["image_filename"])
        image_id = Path(filename).stem
        answer = item.get("answer")
        answer_str = None if answer is None else str(answer)
        qid = item.get("question_index", pos)
        metadata = {
            key: item[key]
            for key in ("question_family_index", "template_filename", "split")
            if key in item
        }
        if "split" in metadata:
            metadata["image_split"] = metadata.pop("split")
        metadata["image_index"] = image_index
        return Question(
            question_id=str(qid),
            **region_fields(item, text, f"{path}: question #{pos}"),
            answer=answer_str,
            answer_type=answer_type_of(answer_str),
            image_id=image_id,
            image_path=self.images_dir / filename,
            split=split,
            source="clevr",
            gold_program=item.get("program"),
            metadata=metadata,
        )
