"""Per-module latency of the real modules on CPU with tiny random-weight models, and the cache hit
rate on a sample program trace.

The models are built from tiny configs (no download), saved, and loaded by the modules' own
`from_pretrained` path, so the timings cover preprocessing, inference and post-processing of the
real code, not the speed of real-size models. Run: `python benchmarks/real_modules_cpu.py`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image as PILImage

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from base_modules.real import RealModulesConfig, real_modules  # noqa: E402
from base_modules.real.perception import Perception  # noqa: E402
from base_modules.types import Image  # noqa: E402
from test_real_modules_unit import FakeChat  # noqa: E402
from test_real_modules_vision import tiny_depth_anything, tiny_grounding_dino, tiny_sam2  # noqa: E402

TRACE: list[tuple[str, tuple[Any, ...]]] = [
    # A program counting chairs in front of the table, asking colours, comparing sizes.
    ("loc", ("chair",)), ("loc", ("table",)), ("loc", ("chair",)), ("loc", ("objects",)),
    ("depth", (0, "chair")), ("depth", (1, "chair")), ("depth", (0, "table")),
    ("vqa", ("What color is this object?", 0, "chair")), ("vqa", ("What color is this object?", 0, "chair")),
    ("get_2D_object_size", (0, "chair")), ("get_2D_object_size", (0, "table")),
    ("same_object", (0, "chair", 0, "objects")), ("loc", ("chair",)), ("depth", (0, "chair")),
]


def make_image(directory: Path, name: str, width: int = 320, height: int = 240) -> Image:
    rng = np.random.default_rng(len(name))
    path = directory / f"{name}.png"
    PILImage.fromarray(rng.integers(0, 255, (height, width, 3), dtype=np.uint8)).save(path)
    return Image(image_id=name, path=str(path), width=width, height=height)


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    import torch
    import transformers

    torch.set_num_threads(1)
    transformers.utils.logging.disable_progress_bar()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        tiny_grounding_dino(root / "gdino"), tiny_sam2(root / "sam2"), tiny_depth_anything(root / "depth")
        print(f"tiny models built and saved: {time.perf_counter() - start:.2f} s")
        config = RealModulesConfig(device="cpu", offline=True, detector_model=str(root / "gdino"),
                                   segmenter_model=str(root / "sam2"), depth_model=str(root / "depth"),
                                   box_threshold=0.0, text_threshold=0.0, max_detections=5)
        modules = real_modules(perception=Perception(config, vqa_client=FakeChat("red")))
        start = time.perf_counter()
        for module in modules:
            module.load()
        print(f"load (from_pretrained, all modules): {time.perf_counter() - start:.2f} s\n")

        # Cold latency: every call on a fresh image misses every cache.
        cold: dict[str, list[float]] = {}
        for n in range(3):
            image = make_image(root, f"cold{n}")
            cold.setdefault("loc (detect+segment)", []).append(timed(lambda: modules.loc(image, "chair")))
            box = modules.loc(image, "chair")[0]
            cold.setdefault("depth (depth map)", []).append(timed(lambda: modules.depth(image, box)))
            cold.setdefault("vqa (stub endpoint)", []).append(
                timed(lambda: modules.vqa(image, "What color is it?", box)))
            cold.setdefault("get_2D_object_size", []).append(timed(lambda: modules.get_2D_object_size(image, box)))
            cold.setdefault("same_object", []).append(timed(lambda: modules.same_object(image, box, box)))
            cold.setdefault("loc (cached prompt)", []).append(timed(lambda: modules.loc(image, "Chair.")))
            cold.setdefault("depth (cached map)", []).append(timed(lambda: modules.depth(image, box)))
        print(f"{'call':28s} {'median ms':>10s} {'max ms':>8s}   (CPU, 1 thread, 320x240 image)")
        for name, values in cold.items():
            print(f"{name:28s} {1000 * statistics.median(values):10.1f} {1000 * max(values):8.1f}")

        # Cache hit rate on a program trace over a fresh image.
        perception = modules.loc.perception
        perception.cache.clear()
        image = make_image(root, "trace")
        start = time.perf_counter()
        found: dict[str, list[list[float]]] = {}
        for name, args in TRACE:
            run_trace_call(modules, image, name, args, found)
        elapsed = time.perf_counter() - start
        stats = perception.cache.stats()
        print(f"\nprogram trace: {len(TRACE)} module calls in {elapsed * 1000:.0f} ms")
        for kind, counts in stats.items():
            print(f"  {kind:16s} hits {counts['hits']:3d}  misses (model runs) {counts['misses']:3d}")
        print(f"cache hit rate: {perception.cache.hit_rate():.0%}  "
              f"(loc {perception.cache.hit_rate('loc'):.0%}, depth map {perception.cache.hit_rate('depth_map'):.0%})")


def run_trace_call(modules: Any, image: Image, name: str, args: tuple[Any, ...],
                   found: dict[str, list[list[float]]]) -> None:
    """One program call; boxes come from the trace's earlier `loc` results, as in a program."""

    def box(index: int, prompt: str) -> list[float]:
        boxes = found[prompt]
        return boxes[min(index, len(boxes) - 1)]

    if name == "loc":
        found[args[0]] = modules.loc(image, args[0])
    elif name == "depth":
        modules.depth(image, box(*args))
    elif name == "vqa":
        modules.vqa(image, args[0], box(args[1], args[2]))
    elif name == "get_2D_object_size":
        modules.get_2D_object_size(image, box(*args))
    elif name == "same_object":
        modules.same_object(image, box(args[0], args[1]), box(args[2], args[3]))


if __name__ == "__main__":
    main()
