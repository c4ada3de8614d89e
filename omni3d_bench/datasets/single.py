"""One question about one image file (or the ordered frames of one scene), as a data set, so
`vadar solve` takes the same path as `eval`.

The scene annotations are optional (CLEVR format: a scene object, or a scenes file holding the
image's entry); without them only model-backed modules can serve the question, unless the
pictures are frames of a generated benchmark, which bring their own (`bench_frames`). Regions (one
per `<mask>` token of the question, see omni3d_bench.region_args) point into the one image.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from base_modules.types import Image, Region
from omni3d_bench.datasets.bench_frames import BenchFramesDataset, bench_of_frames, is_views_scene_file, scene_frames
from omni3d_bench.datasets.clevr import CLEVR_EXAMPLE_WORDS
from omni3d_bench.datasets.tables import read_text
from omni3d_bench.images import image_handle
from omni3d_bench.region_args import check_in_image, read_region_arg
from omni3d_bench.regions import TOKEN, name_regions
from omni3d_bench.types import DatasetError, Question
from omni3d_bench.relations import CLEVR_CONVENTIONS

SINGLE_SPLIT = "single"
FRAME_SUFFIXES = (".png", ".jpg", ".jpeg")


MAX_FRAMES = 256
"""Most frames `--video` reads: every frame is opened, sent with each program and drawn in a report."""


def video_frames(directory: Path) -> list[Path]:
    """The frames of a video given as a directory of images, in file-name order; a frame that is
    not a readable file (a broken or looping link) is named, not skipped."""
    if not Path(directory).is_dir():
        raise DatasetError(f"--video {directory}: not a directory of frames")
    try:
        frames = sorted(p for p in Path(directory).iterdir() if p.suffix.lower() in FRAME_SUFFIXES)
    except OSError as exc:
        raise DatasetError(f"--video {directory}: cannot list its frames ({exc.strerror or exc})") from None
    if not frames:
        raise DatasetError(f"--video {directory}: no frames ({', '.join(FRAME_SUFFIXES)}) in it")
    if len(frames) > MAX_FRAMES:
        raise DatasetError(f"--video {directory}: {len(frames)} frames, more than the {MAX_FRAMES} read; "
                           "keep a sample of them in a directory of their own")
    for frame in frames:
        if not frame.is_file():
            raise DatasetError(f"--video {directory}: {ascii(frame.name)} is not a readable image file "
                               "(a broken or looping link?)")
    return frames


def load_scene_file(path: Path, image: Path) -> dict[str, Any]:
    """One CLEVR-style scene: a scene object, or the entry of a scenes file for this image."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"scene file {path} does not exist")
    if path.is_dir():
        raise DatasetError(f"scene file {path} is a directory; give the scene's JSON file")
    text = read_text(path)  # not UTF-8, or unreadable: one line
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5,000-digit number, deep nesting
        raise DatasetError(f"scene file {path} is not valid JSON: {exc}") from None
    if isinstance(data, dict) and "objects" in data:
        return data
    scenes = data.get("scenes") if isinstance(data, dict) else None
    if isinstance(scenes, list):
        for scene in scenes:
            if isinstance(scene, dict) and scene.get("image_filename") == image.name:
                return scene
        raise DatasetError(f"scene file {path} has no scene with image_filename {image.name!r}")
    raise DatasetError(f"scene file {path}: expected a scene with 'objects' or a file with 'scenes'")


def single_regions(question: str, regions: Sequence[str | Path | Region], image: Image) -> tuple[str, tuple[Region, ...]]:
    """The question with its `<mask>` tokens rewritten to typed identifiers, and its regions
    (`--region` arguments, or `Region`s) read, checked against the image's size and named."""
    read = []
    for k, region in enumerate(regions):
        where = f"region #{k}" if isinstance(region, Region) else f"--region {region}"
        read.append(region if isinstance(region, Region) else read_region_arg(str(region)))
        check_in_image(read[-1], image.width, image.height, where)
    tokens = question.count(TOKEN)
    if tokens > len(read):
        raise DatasetError(f"the question has {tokens} {TOKEN} token(s) but {len(read)} --region "
                           "option(s); give one --region per token, in order")
    return name_regions(question, read, "--question")


def single_question_dataset(image_path: Path | list[Path], question: str, scene_path: Path | None = None,
                            regions: Sequence[str | Path | Region] = ()) -> SingleQuestionDataset | BenchFramesDataset:
    """The data set of one question about `image_path` (or frames): frames of a generated benchmark
    come with their own annotations (found beside them, or from a multi-view `scene_path`), any
    other picture with the CLEVR scene `scene_path`, if given."""
    paths = [Path(p) for p in image_path] if isinstance(image_path, list) else [Path(image_path)]
    if scene_path is not None and is_views_scene_file(scene_path):
        root: Path | None = scene_frames(paths, scene_path)[0]
    else:
        root = bench_of_frames(paths) if scene_path is None else None
    if root is None:
        return SingleQuestionDataset(image_path, question, scene_path, regions)
    if not question.strip():
        raise DatasetError("the question is empty; pass it with --question")
    if len(paths) > 1 and regions:
        raise DatasetError("--region points into one image; it cannot be used with several frames")
    text, named = single_regions(question.strip(), regions, image_handle(paths[0].stem, paths[0]))
    return BenchFramesDataset(paths, question, root, named, text)


class SingleQuestionDataset:
    """A data set of exactly one unanswered question about `image_path`."""

    name = "single"
    example_words = CLEVR_EXAMPLE_WORDS  # scene files are CLEVR scenes
    conventions = CLEVR_CONVENTIONS

    def __init__(self, image_path: Path | list[Path], question: str,
                 scene_path: Path | None = None, regions: Sequence[str | Path | Region] = ()) -> None:
        """`regions`: `--region` arguments (a box `x0,y0,x1,y1` or a region file) or read
        `Region`s, one per `<mask>` token of `question`, in order."""
        if not question.strip():
            raise DatasetError("the question is empty; pass it with --question")
        paths = [Path(p) for p in image_path] if isinstance(image_path, list) else [Path(image_path)]
        if len(paths) > 1 and scene_path is not None:
            raise DatasetError(f"--scene {scene_path}: with several frames it must be the multi-view scene file "
                               "of a generated benchmark (BENCH/scenes/<scene_id>.json); a CLEVR scene "
                               "annotates one image")
        if len(paths) > 1 and regions:
            raise DatasetError("--region points into one image; it cannot be used with several frames")
        self.image_path = paths[0]
        self.root = self.image_path.resolve().parent
        ids = [p.stem if len(paths) == 1 else f"{k:03d}_{p.stem}" for k, p in enumerate(paths)]
        self._handles = {i: image_handle(i, p) for i, p in zip(ids, paths)}
        self._handle = self._handles[ids[0]]
        self._scene = load_scene_file(scene_path, self.image_path) if scene_path is not None else None
        frames = {"view_ids": tuple(ids), "view_paths": tuple(paths)} if len(paths) > 1 else {}
        text, named = single_regions(question.strip(), regions, self._handle)
        self._question = Question(question_id="0", question=text, answer=None,
                                  answer_type="str", image_id=ids[0],
                                  image_path=self.image_path, split=SINGLE_SPLIT, source="cli",
                                  regions=named, **frames)
        self.image_id = ids[0]

    def splits(self) -> list[str]:
        return [SINGLE_SPLIT]

    def questions(self, split: str) -> list[Question]:
        return [self._question]

    def scene(self, image_id: str) -> dict[str, Any] | None:
        return self._scene if image_id == self.image_id else None

    def image(self, question_or_image_id: Question | str) -> Image:
        if isinstance(question_or_image_id, str):
            return self._handles.get(question_or_image_id, self._handle)
        return self._handle
