"""Frames of a generated benchmark asked about directly (`vadar solve --video/--image`), with their
ground truth, so the oracle modules and the 3D scene graph serve them as they serve `eval`.

The frames are recognised by name: a generated frame is `images/<frame id>.png` with its
annotation at `annotations/<frame id>.json` (which names its multi-view `scene_id`). They are found
in the benchmark whose `images/` holds them, or, for frames copied elsewhere under the generator's
file names, in the benchmark of the multi-view scene file given as `--scene`
(`BENCH/scenes/<scene_id>.json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from base_modules.types import Image, Region
from omni3d_bench.datasets.bench import BenchDataset, is_bench_dir
from omni3d_bench.datasets.clevr import read_json
from omni3d_bench.images import image_handle
from omni3d_bench.types import DatasetError, Question

SINGLE_SPLIT = "single"


def is_views_scene_file(path: Path) -> bool:
    """Whether `path` is the world annotation of a generated multi-view scene (`scenes/<id>.json`)."""
    if not Path(path).is_file() or Path(path).parent.name != "scenes":
        return False
    try:
        data = read_json(Path(path))
    except DatasetError:
        return False
    return isinstance(data, dict) and "scene_id" in data and isinstance(data.get("frames"), list)


def bench_of_frames(frames: Sequence[Path]) -> Path | None:
    """The generated benchmark whose `images/` holds every one of `frames` with an annotation."""
    roots = {Path(frame).resolve().parent.parent for frame in frames}
    if len(roots) != 1:
        return None
    root = roots.pop()
    if Path(frames[0]).resolve().parent.name != "images" or not is_bench_dir(root):
        return None
    if not all((root / "annotations" / f"{Path(frame).stem}.json").is_file() for frame in frames):
        return None
    return root


def scene_frames(frames: Sequence[Path], scene_file: Path) -> tuple[Path, str]:
    """(benchmark root, scene id) for `frames` named as the frames of the multi-view `scene_file`."""
    scene_file = Path(scene_file).resolve()
    root = scene_file.parent.parent
    if not is_bench_dir(root):
        raise DatasetError(f"--scene {scene_file}: not in a generated benchmark (no benchmark.json in {root})")
    world = read_json(scene_file)
    known = [str(f.get("image_id")) for f in world["frames"] if isinstance(f, dict)]
    strangers = [Path(frame).name for frame in frames if Path(frame).stem not in known]
    if strangers:
        raise DatasetError(f"{', '.join(strangers[:3])}{' …' if len(strangers) > 3 else ''}: not a frame of "
                           f"{world['scene_id']} (its frames: {', '.join(known)}); keep the generator's file names")
    return root, str(world["scene_id"])


class BenchFramesDataset:
    """One unanswered question about frames of a generated benchmark, with their annotations.

    With several frames they must all show one multi-view scene, whose world annotation the
    scene-graph oracle reads (`world`); one frame is a single-image question of the benchmark.
    """

    name = "single"
    oracle_kind = "annotations3d"
    example_words = BenchDataset.example_words
    conventions = BenchDataset.conventions

    def __init__(self, frames: Sequence[Path], question: str, root: Path,
                 regions: tuple[Region, ...] = (), text: str | None = None) -> None:
        self._bench = BenchDataset(root)
        self.root = self._bench.root
        paths = [Path(p) for p in frames]
        ids = [p.stem for p in paths]
        scenes = {(self.scene(i) or {}).get("scene_id") for i in ids}
        if len(paths) > 1 and (len(scenes) != 1 or None in scenes):
            shown = ", ".join(sorted(map(str, scenes)))
            raise DatasetError(f"the frames show {len(scenes)} scenes ({shown}); give the frames of one scene "
                               f"(--image for each, or a directory holding only them)")
        self._handles = {i: self._handle(i, p) for i, p in zip(ids, paths)}
        frames_fields: dict[str, Any] = {}
        if len(paths) > 1:
            frames_fields = {"view_ids": tuple(ids), "view_paths": tuple(paths), "scene_id": str(scenes.pop())}
        self.image_id = ids[0]
        self._question = Question(question_id="0", question=text if text is not None else question.strip(),
                                  answer=None, answer_type="str", image_id=ids[0], image_path=paths[0],
                                  split=SINGLE_SPLIT, source="cli", regions=regions, **frames_fields)

    def _handle(self, image_id: str, path: Path) -> Image:
        intrinsics = (self.scene(image_id) or {}).get("camera", {}).get("K")
        return image_handle(image_id, path, focal_length=float(intrinsics[0][0]) if intrinsics else None)

    def splits(self) -> list[str]:
        return [SINGLE_SPLIT]

    def questions(self, split: str) -> list[Question]:
        return [self._question]

    def scene(self, image_id: str) -> dict[str, Any] | None:
        return self._bench.scene(image_id)

    def world(self, scene_id: str) -> dict[str, Any] | None:
        return self._bench.world(scene_id)

    def image(self, question_or_image_id: Question | str) -> Image:
        if isinstance(question_or_image_id, str):
            return self._handles.get(question_or_image_id, self._handles[self.image_id])
        return self._handles[self.image_id]
