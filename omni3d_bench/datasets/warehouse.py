"""Adapter for the Physical AI Spatial Intelligence Warehouse data (AI City Challenge 2025, Track 3).

Layout: `<split>.json` files at the root (a list of entries) and images under
`<split>/images/`. Each entry has "id", "image" (a file name), "conversations" (the first,
from "human", holds the question with `<image>` and one `<mask>` per region), "rle" (one COCO RLE
mask per token, in order), "category" ("left_right", "mcq", "distance" or "count") and, outside
the test split, "normalized_answer" and "freeform_answer". Tokens become typed identifiers
(omni3d_bench.regions). Distances and counts are scored by Acc@10, the others by exact match;
an "mcq" answer is the number of the chosen region among the question's regions. The data set
has no 3D annotations, so oracle modules do not apply to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from base_modules.types import Image
from omni3d_bench.datasets.clevr import read_json
from omni3d_bench.images import image_handle
from omni3d_bench.question_checks import check_questions
from omni3d_bench.regions import question_regions
from omni3d_bench.types import AnswerType, DatasetError, Question

SPLIT_NAMES = ("train", "val", "test")
CATEGORIES: dict[str, tuple[AnswerType, str]] = {
    "left_right": ("str", "exact"), "mcq": ("int", "exact"),
    "distance": ("float", "acc@10"), "count": ("int", "acc@10"),
}
REQUIRED = ("id", "image", "conversations", "rle", "category")


def is_warehouse_dir(path: Path) -> bool:
    """True when `path` holds a `<split>.json` whose first entry has "rle" and "conversations"."""
    for split in SPLIT_NAMES:
        marker = Path(path) / f"{split}.json"
        if marker.is_file():
            try:
                entries = read_json(marker)
            except DatasetError:
                return False
            return isinstance(entries, list) and bool(entries) and isinstance(entries[0], dict) \
                and "rle" in entries[0] and "conversations" in entries[0]
    return False


def question_text(conversations: Any, where: str) -> str:
    """The human turn of an entry, without the `<image>` placeholder."""
    turns = [t for t in conversations if isinstance(t, dict) and t.get("from") == "human"] \
        if isinstance(conversations, list) else []
    if not turns or not isinstance(turns[0].get("value"), str):
        raise DatasetError(f"{where}: 'conversations' has no human turn with the question")
    return turns[0]["value"].replace("<image>", "").strip()


class WarehouseDataset:
    """The warehouse spatial-intelligence data rooted at `root`."""

    oracle_kind = None
    """No 3D annotations: only model-backed modules can answer its questions."""

    example_words = {"category": "pallet"}

    def __init__(self, root: Path, name: str = "warehouse") -> None:
        self.root = Path(root).resolve()
        self.name = name
        if not is_warehouse_dir(self.root):
            raise DatasetError(f"{self.root} is not a warehouse data set: expected train.json, "
                               "val.json or test.json with 'conversations' and 'rle' entries.")
        self._questions: dict[str, list[Question]] = {}
        self._handles: dict[str, Image] = {}
        self._paths: dict[str, Path] = {}

    def splits(self) -> list[str]:
        return [s for s in SPLIT_NAMES if (self.root / f"{s}.json").is_file()]

    def questions(self, split: str) -> list[Question]:
        if split not in self._questions:
            self._questions[split] = self._load(split)
        return list(self._questions[split])

    def scene(self, image_id: str) -> dict[str, Any] | None:
        return None

    def image(self, question_or_image_id: Question | str) -> Image:
        if isinstance(question_or_image_id, Question):
            image_id, path = question_or_image_id.image_id, question_or_image_id.image_path
        else:
            image_id = str(question_or_image_id)
            path = self._paths.get(image_id, self.root / "images" / f"{image_id}.png")
        if image_id not in self._handles:
            self._handles[image_id] = image_handle(image_id, Path(path))
        return self._handles[image_id]

    def _load(self, split: str) -> list[Question]:
        path = self.root / f"{split}.json"
        if not path.is_file():
            raise DatasetError(f"unknown split {split!r}: {path} does not exist. Available: "
                               f"{', '.join(self.splits()) or 'none'}.")
        entries = read_json(path)
        if not isinstance(entries, list):
            raise DatasetError(f"{path} must hold a list of entries.")
        return check_questions([self._question(entry, pos, split, path) for pos, entry in enumerate(entries)], path)

    def _question(self, entry: Any, pos: int, split: str, path: Path) -> Question:
        where = f"{path}: entry #{pos}"
        missing = [k for k in REQUIRED if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise DatasetError(f"{where} lacks {', '.join(missing)}.")
        category = entry["category"]
        if not isinstance(category, str) or category not in CATEGORIES:
            raise DatasetError(f"{where} has category {category!r}; expected one of {sorted(CATEGORIES)}.")
        answer_type, metric = CATEGORIES[category]
        text, regions = question_regions(question_text(entry["conversations"], where), entry["rle"], where)
        image_path = self.root / split / "images" / str(entry["image"])
        image_id = Path(str(entry["image"])).stem
        self._paths[image_id] = image_path
        answer = entry.get("normalized_answer")
        return Question(
            question_id=str(entry["id"]), question=text,
            answer=None if answer is None else str(answer), answer_type=answer_type,
            image_id=image_id, image_path=image_path, split=split, source="warehouse",
            metadata={"family": category, "freeform_answer": entry.get("freeform_answer")},
            metric=metric, regions=regions,
        )
