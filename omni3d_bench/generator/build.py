"""Generate a whole benchmark directory from a seed: scenes, renders, annotations, questions.

Scene i depends only on (seed, i), so a benchmark of N scenes is the prefix of one of N + k.
Layout written under `out`:
  benchmark.json              what was generated (format marker, seed, counts, family mix)
  images/<id>.png             RGB, sRGB 8-bit
  depth/<id>.png              camera-frame z per pixel, uint16 millimetres (0 = no hit)
  masks/<id>.png              instance masks, uint8 (0 = floor/sky, k = object with mask_value k)
  annotations/<id>.json       camera and objects (see annotate.py)
  questions/<split>.json      {"info": ..., "questions": [...]}
With views > 1 every scene is K frames <id>_f<k> (images, depth, masks, annotations as above)
plus scenes/<id>.json, the scene in world coordinates (see views.py).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image as PILImage

from omni3d_bench.generator.annotate import scene_annotation
from omni3d_bench.generator.questions import QUESTIONS_PER_SCENE, scene_questions
from omni3d_bench.generator.render import Rendering, render, visible_enough
from omni3d_bench.generator.scene import sample_scene
from omni3d_bench.generator.view_questions import view_questions
from omni3d_bench.generator.views import generate_views_scene
from omni3d_bench.generator.warehouse import generate_warehouse_scene
from omni3d_bench.generator.warehouse_questions import warehouse_questions

FORMAT = "vadar-bench"
FORMAT_VERSION = 1
DEFAULT_SPLIT = "test"
MAX_RENDER_TRIES = 10
KINDS = ("objects", "warehouse")
"""Scene kinds: household objects (the default), or a warehouse floor with buffer zones."""


def image_id_for(index: int) -> str:
    return f"scene_{index:05d}"


def dump_json(data: Any, path: Path) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")


def generate_scene(seed: int, index: int) -> tuple[dict[str, Any], Rendering]:
    """Render scene `index` of the benchmark with `seed`; redraws hidden-object layouts."""
    rng = np.random.default_rng([seed, index])
    for _ in range(MAX_RENDER_TRIES):
        objects, camera = sample_scene(rng)
        rendering = render(objects, camera, seed=index)
        if visible_enough(rendering, [o.box2d for o in objects]):
            image_id = image_id_for(index)
            return scene_annotation(image_id, objects, camera, rendering, seed), rendering
    raise RuntimeError(f"scene {index}: no layout with every object visible after "
                       f"{MAX_RENDER_TRIES} tries")


def write_scene(out: Path, annotation: dict[str, Any], rendering: Rendering) -> None:
    image_id = annotation["image_id"]
    PILImage.fromarray(rendering.rgb).save(out / "images" / f"{image_id}.png")
    millimetres = np.clip(np.round(rendering.depth * 1000.0), 0, 65535).astype(np.uint16)
    PILImage.fromarray(millimetres).save(out / "depth" / f"{image_id}.png")
    PILImage.fromarray(rendering.instances).save(out / "masks" / f"{image_id}.png")
    dump_json(annotation, out / "annotations" / f"{image_id}.json")


def generate_benchmark(out: Path, scenes: int, seed: int = 0, split: str = DEFAULT_SPLIT,
                       per_scene: int = QUESTIONS_PER_SCENE,
                       progress: Callable[[int], None] | None = None,
                       views: int = 1, kind: str = "objects") -> dict[str, Any]:
    """Write `scenes` scenes and their questions under `out`; returns the benchmark info.

    `views` > 1 renders each scene as that many frames along a camera path in a room and asks
    the multi-view question families; 1 writes exactly the single-image benchmark.
    `kind` "warehouse" renders warehouse floors and asks questions that point at regions
    (single images only).
    """
    if scenes < 1:
        raise ValueError("scenes must be at least 1")
    if views < 1:
        raise ValueError("views must be at least 1")
    if kind not in KINDS:
        raise ValueError(f"unknown scene kind {kind!r}; expected one of {', '.join(KINDS)}")
    if kind == "warehouse" and views > 1:
        raise ValueError("warehouse scenes are single images; leave views at 1")
    out = Path(out)
    for sub in ("images", "depth", "masks", "annotations", "questions") + (("scenes",) * (views > 1)):
        (out / sub).mkdir(parents=True, exist_ok=True)
    questions: list[dict[str, Any]] = []
    for index in range(scenes):
        rng = np.random.default_rng([seed, index, 1])
        if views > 1:
            scene, frames = generate_views_scene(seed, index, views)
            for annotation, rendering in frames:
                write_scene(out, annotation, rendering)
            dump_json(scene, out / "scenes" / f"{scene['scene_id']}.json")
            questions += view_questions(scene, rng, per_scene)
        elif kind == "warehouse":
            annotation, rendering = generate_warehouse_scene(seed, index, image_id_for(index))
            write_scene(out, annotation, rendering)
            questions += warehouse_questions(annotation, rendering.instances, rng, per_scene)
        else:
            annotation, rendering = generate_scene(seed, index)
            write_scene(out, annotation, rendering)
            questions += scene_questions(annotation, rng, per_scene)
        if progress is not None:
            progress(index + 1)
    families = Counter(q["family"] for q in questions)
    info = {
        "format": FORMAT, "version": FORMAT_VERSION, "seed": seed, "scenes": scenes,
        "split": split, "questions": len(questions), "units": "meters",
        "families": dict(sorted(families.items())),
        "answer_types": dict(sorted(Counter(q["answer_type"] for q in questions).items())),
    }
    if views > 1:
        info["views"] = views
    if kind != "objects":
        info["kind"] = kind
    dump_json({"info": info, "questions": questions}, out / "questions" / f"{split}.json")
    dump_json(info, out / "benchmark.json")
    return info
