"""Omni3D-Bench adapter: rows of (image, question, answer, answer_type) with no programs.

Accepts the Hugging Face Parquet table, a directory (annotations.json / .jsonl / .parquet
plus image files) or a zip of either. Images embedded as bytes are written once to a cache
directory, because perception modules take a file path.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from base_modules.types import Image
from omni3d_bench.datasets.tables import extract_zip, load_json, pick_table, read_rows
from omni3d_bench.question_checks import check_questions
from omni3d_bench.images import image_handle
from omni3d_bench.types import DatasetError, Question

ANSWER_TYPES = ("int", "float", "str")
DEFAULT_SPLIT = "test"
QUESTION_ID_FIELDS = ("question_index", "q_index", "question_id")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


def default_cache_dir() -> Path:
    """Where embedded images and unpacked zips go when the caller names no cache directory."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("omni3d_bench"))


def image_suffix(data: bytes, hint: str | None) -> str:
    """File suffix for embedded image bytes: from the row's path when given, else sniffed."""
    if hint and Path(hint).suffix.lower() in IMAGE_SUFFIXES:
        return Path(hint).suffix.lower()
    if data.startswith(b"\xff\xd8"):
        return ".jpg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return ".png"


class Omni3DBenchDataset:
    """Omni3D-Bench questions from a directory, a Parquet file or a zip, loaded lazily."""

    def __init__(self, source: Path, cache_dir: Path | None = None, split: str = DEFAULT_SPLIT,
                 name: str = "omni3d_bench") -> None:
        self.source = Path(source).resolve()
        self.root = self.source
        self.name = name
        self.split = split
        self._cache_dir = Path(cache_dir).resolve() if cache_dir is not None else None
        if not self.source.exists():
            raise DatasetError(
                f"Omni3D-Bench data not found: {self.source}. Pass the unpacked directory, the "
                "Parquet file or omni3d-bench.zip."
            )
        self._questions: list[Question] | None = None
        self._images: dict[str, Path] = {}
        self._handles: dict[str, Image] = {}
        self._scenes: dict[str, dict[str, Any]] | None = None
        self._table: Path | None = None

    @property
    def cache_dir(self) -> Path:
        if self._cache_dir is None:
            self._cache_dir = default_cache_dir()
        return self._cache_dir

    def splits(self) -> list[str]:
        """Omni3D-Bench is a single evaluation split."""
        return [self.split]

    def questions(self, split: str | None = None) -> list[Question]:
        split = self.split if split is None else split
        if split != self.split:
            raise DatasetError(
                f"unknown split {split!r} for Omni3D-Bench at {self.source}; available: "
                f"{self.split}."
            )
        if self._questions is None:
            self._questions = self._load()
        return list(self._questions)

    def scene(self, image_id: str) -> dict[str, Any] | None:
        """Annotations of `image_id` if a scenes.json came with the data, else None."""
        if self._scenes is None:
            self.questions()
        assert self._scenes is not None
        return self._scenes.get(image_id)

    def image(self, question_or_image_id: Question | str) -> Image:
        if isinstance(question_or_image_id, Question):
            image_id, path = question_or_image_id.image_id, question_or_image_id.image_path
        else:
            image_id = str(question_or_image_id)
            self.questions()
            if image_id not in self._images:
                raise DatasetError(f"no image with id {image_id!r} in {self.source}.")
            path = self._images[image_id]
        if image_id not in self._handles:
            self._handles[image_id] = image_handle(image_id, Path(path))
        return self._handles[image_id]

    # -- loading -------------------------------------------------------------------------

    def _resolve_table(self) -> Path:
        if self.source.is_dir():
            return pick_table(self.source)
        suffix = self.source.suffix.lower()
        if suffix == ".zip":
            return pick_table(extract_zip(self.source, self.cache_dir / "unpacked"))
        if suffix in (".parquet", ".json", ".jsonl"):
            return self.source
        raise DatasetError(
            f"cannot read {self.source}: expected a directory, .parquet, .json, .jsonl or .zip."
        )

    def _load(self) -> list[Question]:
        table = self._resolve_table()
        self._table = table
        rows = read_rows(table)
        self._scenes = self._load_scenes(table.parent)
        out: list[Question] = []
        seen: dict[str, int] = {}
        for pos, row in enumerate(rows):
            question = self._to_question(row, pos, table)
            if question.question_id in seen:
                raise DatasetError(
                    f"{table}: row #{pos} repeats question id {question.question_id} (first "
                    f"used by row #{seen[question.question_id]}); ids must be unique."
                )
            seen[question.question_id] = pos
            out.append(question)
        return check_questions(out, table)

    def _load_scenes(self, base: Path) -> dict[str, dict[str, Any]]:
        """Optional per-image annotations: scenes.json, {"scenes": [...]} keyed by image."""
        path = base / "scenes.json"
        if not path.is_file():
            return {}
        data = load_json(path)
        scenes = data.get("scenes") if isinstance(data, dict) else data
        if not isinstance(scenes, list):
            raise DatasetError(f"{path} has no 'scenes' list.")
        out = {}
        for pos, scene in enumerate(scenes):
            key = next((scene.get(k) for k in ("image_id", "image_index", "image_filename")
                        if isinstance(scene, dict) and scene.get(k) is not None), None)
            if key is None:
                raise DatasetError(f"{path}: scene #{pos} names no image_id or image_index.")
            out[self._image_id(str(key))] = scene
        return out

    @staticmethod
    def _image_id(reference: str) -> str:
        """Image ids drop a trailing image suffix: "x.jpg" and "x" name the same image."""
        name = Path(reference).name
        stem, suffix = os.path.splitext(name)
        return stem if suffix.lower() in IMAGE_SUFFIXES else name

    def _to_question(self, row: Any, pos: int, table: Path) -> Question:
        if not isinstance(row, dict):
            raise DatasetError(f"{table}: row #{pos} is not an object.")
        for field in ("question", "answer", "answer_type"):
            if field not in row:
                raise DatasetError(f"{table}: row #{pos} is missing the required field {field!r}.")
        text = row["question"]
        if not isinstance(text, str):
            raise DatasetError(f"{table}: row #{pos} has a 'question' of type {type(text).__name__}; it must be text.")
        if not text.strip():
            raise DatasetError(f"{table}: row #{pos} has an empty 'question' text.")
        answer_type = str(row["answer_type"]).strip().lower()
        if answer_type not in ANSWER_TYPES:
            raise DatasetError(
                f"{table}: row #{pos} has answer_type {row['answer_type']!r}; expected one of "
                f"{', '.join(ANSWER_TYPES)}."
            )
        qid = next((row[k] for k in QUESTION_ID_FIELDS if row.get(k) is not None), pos)
        image_id, path = self._image_of(row, pos, table)
        answer = row["answer"]
        if answer_type == "int" and isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        metadata = {k: v for k, v in row.items()
                    if k not in ("image", "question", "answer", "answer_type")
                    and not isinstance(v, (bytes, bytearray, dict))}
        return Question(
            question_id=str(qid),
            question=text,
            answer=None if answer is None else str(answer),
            answer_type=answer_type,  # type: ignore[arg-type]
            image_id=image_id,
            image_path=path,
            split=self.split,
            source="omni3d_bench",
            gold_program=None,
            metadata=metadata,
        )

    def _image_of(self, row: dict[str, Any], pos: int, table: Path) -> tuple[str, Path]:
        """Image id and file path of a row; embedded bytes are written to the cache once."""
        cell = row.get("image")
        filename = row.get("image_filename")
        if isinstance(cell, str) and filename is None:
            filename, cell = cell, None
        data, hint = None, None
        if isinstance(cell, (bytes, bytearray)):
            data = bytes(cell)
        elif isinstance(cell, dict):
            hint = cell.get("path")
            raw = cell.get("bytes")
            if isinstance(raw, str):
                try:
                    raw = base64.b64decode(raw, validate=True)
                except ValueError as exc:
                    raise DatasetError(
                        f"{table}: row #{pos} field 'image.bytes' is not valid base64."
                    ) from exc
            data = bytes(raw) if raw is not None else None
            if data is None and hint and filename is None:
                filename = hint
        reference = row.get("image_index")
        if reference is None:
            reference = filename if filename is not None else hint
        if reference is None:
            raise DatasetError(
                f"{table}: row #{pos} names no image: give 'image_filename', 'image_index' or "
                "an 'image' column."
            )
        image_id = self._image_id(str(reference))
        if data is not None:
            path = self._write_image(image_id, data, hint or filename)
        elif filename is not None:
            path = self._locate(str(filename), table.parent)
        else:
            raise DatasetError(
                f"{table}: row #{pos} has image_index {reference!r} but neither image bytes nor "
                "an 'image_filename'."
            )
        previous = self._images.setdefault(image_id, path)
        if previous != path:
            raise DatasetError(
                f"{table}: row #{pos} maps image id {image_id!r} to {path}, but an earlier row "
                f"maps it to {previous}."
            )
        return image_id, path

    @staticmethod
    def _locate(filename: str, base: Path) -> Path:
        """Relative image paths start in images/ when that holds them, else beside the table."""
        candidate = Path(filename)
        if candidate.is_absolute():
            return candidate
        in_images = base / "images" / candidate
        return in_images if in_images.exists() or not (base / candidate).exists() else base / candidate

    def _write_image(self, image_id: str, data: bytes, hint: str | None) -> Path:
        digest = hashlib.sha1(data).hexdigest()[:10]
        name = f"{UNSAFE_CHARS.sub('_', image_id)}-{digest}{image_suffix(data, hint)}"
        path = self.cache_dir / "images" / name
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return path
