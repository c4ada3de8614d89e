"""Build the small built-in sample data set (CLEVR layout) deterministically.

Run `python -m omni3d_bench.sample_builder OUTDIR` to regenerate it. Scenes are sampled with a
fixed seed, projected through one pinhole camera with CLEVR's intrinsics and a CLEVR-like pose,
and drawn as flat shapes; questions use CLEVR's functional-program format and their answers
come from executing those programs on the scene, so gold programs and answers always agree.

Scenes are rejection-sampled so every object pair is well separated along left/right and
front/behind: then CLEVR's relationship rule (ground-plane directions, margin 0.2) and the
camera-frame rule (camera X, depth) give identical answers, and oracles may use either.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from omni3d_bench.sample_questions import build_questions

WIDTH, HEIGHT = 480, 320
FX = FY = 525.0
CX, CY = WIDTH / 2, HEIGHT / 2
CAMERA_POSITION = np.array([7.36, -6.93, 4.96])
"""CLEVR's default camera position; it looks at the world origin, 26 degrees below horizontal."""

SEED = 20240611
NUM_IMAGES = 4
SPLIT = "sample"
IMAGE_PREFIX = "VADAR_sample_"

COLORS = {
    "gray": (87, 87, 87), "red": (173, 35, 35), "blue": (42, 75, 215), "green": (29, 105, 20),
    "brown": (129, 74, 25), "purple": (129, 38, 192), "cyan": (41, 208, 208),
    "yellow": (255, 238, 51),
}
SHAPES = ("cube", "sphere", "cylinder")
MATERIALS = ("rubber", "metal")
HALF_SIZE = {"large": 0.7, "small": 0.35}
BACKGROUND = (196, 196, 192)

RELATION_EPS = 0.2  # CLEVR's margin when computing relationships
MIN_AXIS_GAP = 0.6  # required separation of every pair along both ground directions
MAX_BOX_OVERLAP = 0.15  # fraction of the smaller projected box another object may cover
IMAGE_MARGIN = 6  # pixels kept free around every projected object


def camera_pose() -> tuple[np.ndarray, np.ndarray]:
    """World->camera rotation (rows: x right, y down, z forward) and translation."""
    forward = -CAMERA_POSITION / np.linalg.norm(CAMERA_POSITION)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward])
    return rotation, -rotation @ CAMERA_POSITION


ROTATION, TRANSLATION = camera_pose()


def project(point: np.ndarray) -> tuple[float, float, float]:
    """World point -> (u, v, camera depth)."""
    x, y, z = ROTATION @ point + TRANSLATION
    return FX * x / z + CX, FY * y / z + CY, z


def directions() -> dict[str, list[float]]:
    """CLEVR's per-scene unit directions: camera axes projected onto the ground plane."""
    right = ROTATION[0].copy()
    right[2] = 0.0
    behind = ROTATION[2].copy()
    behind[2] = 0.0
    right, behind = right / np.linalg.norm(right), behind / np.linalg.norm(behind)
    vecs = {"right": right, "left": -right, "behind": behind, "front": -behind,
            "above": np.array([0.0, 0.0, 1.0]), "below": np.array([0.0, 0.0, -1.0])}
    return {k: [round(float(c), 6) + 0.0 for c in v] for k, v in vecs.items()}


def relationships(objects: list[dict[str, Any]], dirs: dict[str, list[float]]) -> dict[str, Any]:
    """relationships[rel][i] lists the j that are `rel` of object i, as CLEVR computes them."""
    coords = [np.array(o["3d_coords"]) for o in objects]
    out: dict[str, list[list[int]]] = {}
    for name in ("right", "behind", "front", "left"):
        direction = np.array(dirs[name])
        out[name] = [
            [j for j, cj in enumerate(coords) if j != i and float((cj - ci) @ direction) > RELATION_EPS]
            for i, ci in enumerate(coords)
        ]
    return out


def projected_box(obj: dict[str, Any]) -> tuple[float, float, float, float]:
    """Pixel box the drawing of `obj` occupies (spheres/cubes square, cylinders narrower)."""
    u, v, depth = obj["pixel_coords"]
    half = FX * HALF_SIZE[obj["size"]] / depth
    half_w = half * (0.8 if obj["shape"] == "cylinder" else 1.0)
    return u - half_w, v - half, u + half_w, v + half


def overlap_fraction(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / smaller


def well_separated(objects: list[dict[str, Any]], dirs: dict[str, list[float]]) -> bool:
    """Every pair apart on the ground, along both directions, and barely overlapping on screen."""
    right, behind = np.array(dirs["right"]), np.array(dirs["behind"])
    for i, a in enumerate(objects):
        for b in objects[i + 1:]:
            diff = np.array(b["3d_coords"]) - np.array(a["3d_coords"])
            if abs(diff @ right) < MIN_AXIS_GAP or abs(diff @ behind) < MIN_AXIS_GAP:
                return False
            depth_gap = b["pixel_coords"][2] - a["pixel_coords"][2]
            if np.sign(depth_gap) != np.sign(diff @ behind) or abs(depth_gap) < 0.3:
                return False
            if overlap_fraction(projected_box(a), projected_box(b)) > MAX_BOX_OVERLAP:
                return False
    return True


def sample_object(rng: random.Random, color: str) -> dict[str, Any]:
    size = rng.choice(tuple(HALF_SIZE))
    half = HALF_SIZE[size]
    x, y = round(rng.uniform(-3.0, 3.0), 4), round(rng.uniform(-3.0, 3.0), 4)
    coords = [x, y, half]
    u, v, depth = project(np.array(coords))
    return {
        "color": color,
        "size": size,
        "rotation": round(rng.uniform(0.0, 360.0), 4),
        "shape": rng.choice(SHAPES),
        "3d_coords": coords,
        "material": rng.choice(MATERIALS),
        "pixel_coords": [int(round(u)), int(round(v)), round(float(depth), 6)],
    }


def inside_image(obj: dict[str, Any]) -> bool:
    x0, y0, x1, y1 = projected_box(obj)
    return x0 >= IMAGE_MARGIN and y0 >= IMAGE_MARGIN and x1 <= WIDTH - IMAGE_MARGIN \
        and y1 <= HEIGHT - IMAGE_MARGIN


def sample_scene(rng: random.Random, index: int) -> dict[str, Any]:
    """One scene of 4-6 objects with distinct colours, drawn until it is well separated."""
    dirs = directions()
    count = rng.randint(4, 6)
    for _ in range(10_000):
        colors = rng.sample(sorted(COLORS), count)
        objects = [sample_object(rng, c) for c in colors]
        if all(inside_image(o) for o in objects) and well_separated(objects, dirs):
            break
    else:  # pragma: no cover - the seed is fixed and known to succeed
        raise RuntimeError("could not sample a well-separated scene")
    return {
        "split": SPLIT,
        "image_index": index,
        "image_filename": f"{IMAGE_PREFIX}{index:06d}.png",
        "objects": objects,
        "relationships": relationships(objects, dirs),
        "directions": dirs,
    }


def draw_scene(scene: dict[str, Any]):
    """Render flat shapes at their projected positions and sizes, farthest first."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for obj in sorted(scene["objects"], key=lambda o: -o["pixel_coords"][2]):
        box = [round(c) for c in projected_box(obj)]
        fill = COLORS[obj["color"]]
        outline = tuple(c // 2 for c in fill)
        if obj["shape"] == "sphere":
            draw.ellipse(box, fill=fill, outline=outline, width=2)
        else:
            draw.rectangle(box, fill=fill, outline=outline, width=2)
        if obj["shape"] == "cylinder":
            cap_h = max(2, (box[3] - box[1]) // 5)
            cap = [box[0], box[1], box[2], box[1] + cap_h]
            draw.ellipse(cap, fill=tuple(min(255, c + 40) for c in fill), outline=outline)
        if obj["material"] == "metal":
            x0, y0, x1, y1 = box
            r = max(2, (x1 - x0) // 8)
            cx, cy = x0 + (x1 - x0) // 3, y0 + (y1 - y0) // 3
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(255, 255, 255))
    return image


def build(out_dir: Path) -> None:
    """Write questions/sample.json, scenes/sample_scenes.json and images/*.png under `out_dir`."""
    out_dir = Path(out_dir)
    rng = random.Random(SEED)
    scenes = [sample_scene(rng, i) for i in range(NUM_IMAGES)]
    questions = build_questions(scenes, SPLIT)
    for sub in ("questions", "scenes", "images"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    info = {"split": SPLIT, "version": "1.0", "license": "MIT",
            "note": "synthetic scenes generated by omni3d_bench.sample_builder"}
    write_json(out_dir / "scenes" / "sample_scenes.json", {"info": info, "scenes": scenes})
    write_json(out_dir / "questions" / f"{SPLIT}.json", {"info": info, "questions": questions})
    for scene in scenes:
        draw_scene(scene).save(out_dir / "images" / scene["image_filename"], optimize=True)


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m omni3d_bench.sample_builder OUTDIR", file=sys.stderr)
        return 2
    build(Path(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
