"""Latency of the real `loc` and `depth` modules with real-size models (random weights), on GPU or CPU.

GroundingDINO, SAM2 and Depth Anything V2 (metric) are built at their published sizes from
transformers configs written here, with random weights (no download), saved to a temporary
directory and loaded by the modules' own `from_pretrained` path with `dtype = "auto"` (fp16 on
CUDA, fp32 on CPU). Random weights give meaningless boxes and depths but the same compute as
trained ones, so the timings hold for real checkpoints at the same input size (640x480 here).

Sizes: `small` (default) is grounding-dino-tiny (Swin-T), sam2.1-hiera-tiny and
Depth-Anything-V2-Metric-*-Small; `large` is the modules' defaults, grounding-dino-base (Swin-B),
sam2.1-hiera-large and Depth-Anything-V2-Metric-*-Large. `--tiny` uses the tiny test models of
`tests/modules/test_real_modules_vision.py` instead (a quick smoke check of this script on CPU).

Run: `python benchmarks/real_modules_gpu.py [--device auto|cuda|cpu] [--size small|large]
[--repeats N] [--tiny]` (`auto`: cuda when torch sees a GPU, else cpu). Real sizes on CPU are slow.
It prints figures and asserts no timings.
"""

from __future__ import annotations

import argparse
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

from base_modules.module import resolve_device  # noqa: E402
from base_modules.real import RealModulesConfig, real_modules  # noqa: E402
from base_modules.real.perception import Perception  # noqa: E402
from base_modules.types import Image  # noqa: E402
from test_real_modules_vision import (  # noqa: E402
    VOCAB,
    tiny_depth_anything,
    tiny_grounding_dino,
    tiny_sam2,
)

WIDTH, HEIGHT = 640, 480
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]

SIZES: dict[str, dict[str, Any]] = {
    # Swin backbone of GroundingDINO; SAM2 Hiera image encoder; DINOv2 backbone of Depth Anything V2.
    "small": {
        "swin": dict(embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24], window_size=7, image_size=224),
        "hiera": dict(hidden_size=96, blocks_per_stage=[1, 2, 7, 2], embed_dim_per_stage=[96, 192, 384, 768],
                      num_attention_heads_per_stage=[1, 2, 4, 8], global_attention_blocks=[5, 7, 9],
                      window_size_per_stage=[8, 4, 14, 7], window_positional_embedding_background_size=[7, 7]),
        "dinov2": dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536),
        "depth_features": ["stage3", "stage6", "stage9", "stage12"],
        "depth_head": dict(reassemble_hidden_size=384, neck_hidden_sizes=[48, 96, 192, 384], fusion_hidden_size=64),
    },
    "large": {
        "swin": dict(embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32], window_size=12, image_size=384),
        "hiera": dict(hidden_size=144, blocks_per_stage=[2, 6, 36, 4], embed_dim_per_stage=[144, 288, 576, 1152],
                      num_attention_heads_per_stage=[2, 4, 8, 16], global_attention_blocks=[23, 33, 43],
                      window_size_per_stage=[8, 4, 16, 8], window_positional_embedding_background_size=[7, 7]),
        "dinov2": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
        "depth_features": ["stage5", "stage12", "stage18", "stage24"],
        "depth_head": dict(reassemble_hidden_size=1024, neck_hidden_sizes=[256, 512, 1024, 1024],
                           fusion_hidden_size=256),
    },
}


def build_and_save(model_class: Any, config: Any, path: Path, device: str) -> int:
    """Random-weight model built directly on `device` (fast init), saved; returns its parameter count."""
    import torch

    torch.manual_seed(0)
    with torch.device(device):
        model = model_class(config)
    model.save_pretrained(path)
    count = sum(p.numel() for p in model.parameters())
    del model
    return count


def real_grounding_dino(path: Path, size: dict[str, Any], device: str) -> int:
    import transformers as tf

    swin = tf.SwinConfig(**size["swin"], out_indices=[2, 3, 4])
    text = {"model_type": "bert"}  # bert-base-uncased, as every GroundingDINO checkpoint
    config = tf.GroundingDinoConfig(backbone_config=swin, text_config=text, use_timm_backbone=False)
    count = build_and_save(tf.GroundingDinoForObjectDetection, config, path, device)
    # Prompts here use only the small test vocabulary, which tokenises them to as few tokens as BERT's.
    tf.BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)}).save_pretrained(path)
    tf.GroundingDinoImageProcessorPil().save_pretrained(path)  # shortest edge 800, longest 1333
    return count


def real_sam2(path: Path, size: dict[str, Any], device: str) -> int:
    import transformers as tf

    hiera = size["hiera"]
    backbone = tf.Sam2HieraDetConfig(**hiera, image_size=[1024, 1024])
    vision = tf.Sam2VisionConfig(backbone_config=backbone, backbone_channel_list=hiera["embed_dim_per_stage"][::-1],
                                 backbone_feature_sizes=[[256, 256], [128, 128], [64, 64]], fpn_hidden_size=256)
    return build_and_save(tf.Sam2Model, tf.Sam2Config(vision_config=vision), path, device)


def real_depth_anything(path: Path, size: dict[str, Any], device: str) -> int:
    import transformers as tf

    backbone = tf.Dinov2Config(**size["dinov2"], image_size=518, patch_size=14, out_features=size["depth_features"],
                               reshape_hidden_states=False)
    config = tf.DepthAnythingConfig(backbone_config=backbone, **size["depth_head"], head_hidden_size=32,
                                    reassemble_factors=[4, 2, 1, 0.5], depth_estimation_type="metric", max_depth=20)
    count = build_and_save(tf.DepthAnythingForDepthEstimation, config, path, device)
    tf.DPTImageProcessorPil(size={"height": 518, "width": 518}, keep_aspect_ratio=True, ensure_multiple_of=14,
                            resample=PILImage.Resampling.BICUBIC, image_mean=IMAGENET_MEAN,
                            image_std=IMAGENET_STD).save_pretrained(path)
    return count


def make_image(directory: Path, name: str) -> Image:
    rng = np.random.default_rng(len(name))
    path = directory / f"{name}.png"
    PILImage.fromarray(rng.integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8)).save(path)
    return Image(image_id=name, path=str(path), width=WIDTH, height=HEIGHT)


def timed(call: Callable[[], Any], device: str) -> float:
    import torch

    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    sync()
    start = time.perf_counter()
    call()
    sync()
    return time.perf_counter() - start


def describe(name: str, model: Any) -> str:
    parameter = next(model.parameters())
    count = sum(p.numel() for p in model.parameters())
    return f"  {name:10s} {type(model).__name__:34s} {count / 1e6:7.1f} M params  {parameter.device}  {parameter.dtype}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto", help="auto (cuda if available, else cpu), cuda, cuda:N or cpu")
    parser.add_argument("--size", choices=sorted(SIZES), default="small", help="real model sizes to build")
    parser.add_argument("--tiny", action="store_true", help="the tiny test models instead (smoke check)")
    parser.add_argument("--repeats", type=int, default=10, help="fresh images timed per call")
    args = parser.parse_args()

    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    device = resolve_device(args.device)
    label = "tiny test models" if args.tiny else f"real-size '{args.size}' models, random weights"
    print(f"torch {torch.__version__}, transformers {transformers.__version__}; --device {args.device} -> "
          f"{device}{' (' + torch.cuda.get_device_name(device) + ')' if device.startswith('cuda') else ''}; {label}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        if args.tiny:
            tiny_grounding_dino(root / "gdino"), tiny_sam2(root / "sam2"), tiny_depth_anything(root / "depth")
        else:
            size = SIZES[args.size]
            counts = [real_grounding_dino(root / "gdino", size, device), real_sam2(root / "sam2", size, device),
                      real_depth_anything(root / "depth", size, device)]
            print(f"built parameters (M): GroundingDINO {counts[0] / 1e6:.1f}, SAM2 {counts[1] / 1e6:.1f}, "
                  f"Depth Anything {counts[2] / 1e6:.1f}")
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
        print(f"models built and saved: {time.perf_counter() - start:.1f} s")

        config = RealModulesConfig(device=args.device, dtype="auto", offline=True, detector_model=str(root / "gdino"),
                                   segmenter_model=str(root / "sam2"), depth_model=str(root / "depth"),
                                   box_threshold=0.0, text_threshold=0.0, max_detections=5)
        perception = Perception(config)
        modules = real_modules(perception=perception)
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        modules.loc.load(), modules.depth.load()  # vqa needs an endpoint: not timed here
        print(f"load (from_pretrained, loc + depth): {time.perf_counter() - start:.1f} s; loaded models:")
        for name, model in [("detector", perception.detector.model), ("segmenter", perception.segmenter.model),
                            ("depth", perception.depth.model)]:
            print(describe(name, model))

        warm = make_image(root, "warm-up")  # first calls pay for kernel selection and allocator growth
        modules.loc(warm, "chair"), modules.depth(warm, [0, 0, 50, 50])

        times: dict[str, list[float]] = {}

        def measure(name: str, call: Callable[[], Any]) -> Any:
            result: list[Any] = []
            times.setdefault(name, []).append(timed(lambda: result.append(call()), device))
            return result[0]

        found = 0
        for n in range(args.repeats):
            image = make_image(root, f"image-{n:03d}")
            boxes = measure("loc (detect+segment)", lambda: modules.loc(image, "chair"))
            found += len(boxes)
            pixels = perception.pixels(image)
            measure("  detector forward only", lambda: perception.detector.detect(pixels, "table"))
            measure("  SAM2 image embedding only", lambda: perception.segmenter.embed(pixels))
            box = boxes[0] if boxes else [100.0, 100.0, 300.0, 300.0]
            measure("loc (new prompt, cached emb.)", lambda: modules.loc(image, "red cube"))
            measure("depth (depth map)", lambda: modules.depth(image, box))
            measure("loc (cached prompt)", lambda: modules.loc(image, "Chair."))
            measure("depth (cached map)", lambda: modules.depth(image, box))
        print(f"\n{'call':32s} {'median ms':>10s} {'max ms':>8s}   ({device}, {WIDTH}x{HEIGHT} image, "
              f"{args.repeats} fresh images, up to 5 boxes per prompt: {found / args.repeats:.1f} on average)")
        for name, values in times.items():
            print(f"{name:32s} {1000 * statistics.median(values):10.1f} {1000 * max(values):8.1f}")
        if device.startswith("cuda"):
            peak = torch.cuda.max_memory_allocated(device) / 2**30
            print(f"\npeak GPU memory allocated (loaded models + inference): {peak:.2f} GiB")


if __name__ == "__main__":
    main()
