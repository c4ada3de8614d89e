"""Adapter for the built-in generated benchmark (see omni3d_bench/generator/build.py).

Recognised by `benchmark.json` with format "vadar-bench". `scene(image_id)` returns the image's
annotation dict, which the 3D-annotation oracle modules read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from base_modules.types import Image
from omni3d_bench.datasets.clevr import read_json
from omni3d_bench.images import image_handle
from omni3d_bench.question_checks import check_questions
from omni3d_bench.regions import region_fields
from omni3d_bench.types import DatasetError, Question
from omni3d_bench.relations import GENERATED_CONVENTIONS

FORMAT = "vadar-bench"
ANSWER_TYPES = ("int", "float", "str")
REQUIRED = ("question_id", "question", "answer", "answer_type", "image_id", "image_filename")


def is_bench_dir(path: Path) -> bool:
    marker = Path(path) / "benchmark.json"
    if not marker.is_file():
        return False
    try:
        return read_json(marker).get("format") == FORMAT
    except (DatasetError, AttributeError):
        return False


class BenchDataset:
    """A generated benchmark rooted at `root`."""

    oracle_kind = "annotations3d"
    """Which oracle modules read this data set's scenes (see base_modules.oracle)."""

    example_words = {"color": "red", "material": "metal"}
    """One value per attribute its modules understand, for test calls of new helpers."""

    conventions = GENERATED_CONVENTIONS
    """How its ground truth defines relations and measures (`omni3d_bench.relations`), in words a
    helper's implementation can follow."""

    def __init__(self, root: Path, name: str = "vadar-bench") -> None:
        self.root = Path(root).resolve()
        self.name = name
        if not is_bench_dir(self.root):
            raise DatasetError(f"{self.root} is not a generated benchmark: benchmark.json with "
                               f"format {FORMAT!r} is missing. Create one with `vadar bench "
                               "generate --out DIR`.")
        self.info: dict[str, Any] = read_json(self.root / "benchmark.json")
        self._questions: dict[str, list[Question]] = {}
        self._scenes: dict[str, dict[str, Any] | None] = {}
        self._worlds: dict[str, dict[str, Any] | None] = {}
        self._handles: dict[str, Image] = {}

    def splits(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "questions").glob("*.json"))

    def questions(self, split: str) -> list[Question]:
        if split not in self._questions:
            self._questions[split] = self._load(split)
        return list(self._questions[split])

    def scene(self, image_id: str) -> dict[str, Any] | None:
        """The annotation dict of `image_id`, or None when it has no annotation file."""
        if image_id not in self._scenes:
            path = self.root / "annotations" / f"{image_id}.json"
            self._scenes[image_id] = read_json(path) if path.is_file() else None
        return self._scenes[image_id]

    def world(self, scene_id: str) -> dict[str, Any] | None:
        """The world-frame annotation of multi-view scene `scene_id` (room, cameras, objects)."""
        if scene_id not in self._worlds:
            path = self.root / "scenes" / f"{scene_id}.json"
            self._worlds[scene_id] = read_json(path) if path.is_file() else None
        return self._worlds[scene_id]

    def image(self, question_or_image_id: Question | str) -> Image:
        if isinstance(question_or_image_id, Question):
            image_id, path = question_or_image_id.image_id, question_or_image_id.image_path
        else:
            image_id = str(question_or_image_id)
            path = self.root / "images" / f"{image_id}.png"
        if image_id not in self._handles:
            scene = self.scene(image_id) or {}
            intrinsics = scene.get("camera", {}).get("K")
            focal = float(intrinsics[0][0]) if intrinsics else None
            self._handles[image_id] = image_handle(image_id, Path(path), focal_length=focal)
        return self._handles[image_id]

    def _views(self, item: dict[str, Any]) -> dict[str, Any]:
        """The frame fields of a multi-view question; nothing for a single-image one."""
        if "view_ids" not in item:
            return {}
        ids, files = item["view_ids"], item.get("view_filenames") or []
        if len(ids) != len(files) or not ids or ids[0] != item["image_id"]:
            raise DatasetError(f"question {item['question_id']}: view_ids and view_filenames "
                               "must be equally long and start with image_id")
        return {"view_ids": tuple(map(str, ids)), "scene_id": item.get("scene_id"),
                "view_paths": tuple(self.root / "images" / f for f in files)}

    def _load(self, split: str) -> list[Question]:
        path = self.root / "questions" / f"{split}.json"
        if not path.is_file():
            raise DatasetError(f"unknown split {split!r}: {path} does not exist. Available: "
                               f"{', '.join(self.splits()) or 'none'}.")
        raw = read_json(path)
        items = raw.get("questions") if isinstance(raw, dict) else None
        if not isinstance(items, list):
            raise DatasetError(f"{path} has no 'questions' list.")
        out = []
        for pos, item in enumerate(items):
            missing = [k for k in REQUIRED if not isinstance(item, dict) or k not in item]
            if missing:
                raise DatasetError(f"{path}: question #{pos} lacks {', '.join(missing)}.")
            if item["answer_type"] not in ANSWER_TYPES:
                raise DatasetError(f"{path}: question #{pos} has answer_type "
                                   f"{item['answer_type']!r}; expected one of {ANSWER_TYPES}.")
            out.append(Question(
                question_id=str(item["question_id"]),
                **region_fields(item, item["question"], f"{path}: question #{pos}"),
                answer=str(item["answer"]), answer_type=item["answer_type"],
                image_id=str(item["image_id"]),
                image_path=self.root / "images" / item["image_filename"], split=split,
                source="vadar-bench",
                metadata={"family": item.get("family"), "object_ids": item.get("object_ids"),
                          **({"phrases": item["phrases"]} if "phrases" in item else {})},
                **self._views(item),
            ))
        return check_questions(out, path)
