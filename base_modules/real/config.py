"""Settings of the model-backed modules: one flat dataclass of plain types.

Flat and plain (str, int, float, bool, Path, optional) so that vadar's configuration loader can
fill it as one TOML section with `VADAR_<SECTION>_<FIELD>` environment overrides. Every model
setting accepts either a Hugging Face model id or a local directory holding the saved model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class RealModulesConfig:
    # -- where and how models run ------------------------------------------------------------------
    device: str = "auto"  # auto: cuda when torch sees a GPU, else cpu
    dtype: str = "auto"  # auto: float16 on cuda, float32 on cpu; or float32 / float16 / bfloat16
    offline: bool = False  # never ask the hub, use local paths or the local hub cache only
    hf_cache_dir: Path | None = None  # where hub downloads live (default: the hub's own cache)

    # -- loc: open-vocabulary detection, then box-prompted segmentation ---------------------------
    detector_backend: str = "auto"  # auto | transformers | groundingdino-py
    detector_model: str = "IDEA-Research/grounding-dino-base"
    groundingdino_config: Path | None = None  # groundingdino-py: the model's .py config file
    groundingdino_checkpoint: Path | None = None  # groundingdino-py: the .pth weights
    box_threshold: float = 0.25
    text_threshold: float = 0.25
    nms_iou: float = 0.5  # class-agnostic NMS: drop a box overlapping a better one above this
    max_detections: int = 50
    segmenter_backend: str = "auto"  # auto | transformers | sam2 | none (boxes stay detector boxes)
    segmenter_model: str = "facebook/sam2.1-hiera-large"
    sam2_config: str | None = None  # sam2 package: config name, with sam2_checkpoint a local .pt
    sam2_checkpoint: Path | None = None
    mask_box_margin: float = 0.1  # masks are clipped to the detector box grown by this fraction

    # -- depth: metric monocular depth map, once per image ----------------------------------------
    depth_backend: str = "auto"  # auto (UniDepth if installed) | unidepth | transformers
    depth_model: str = "depth-anything/Depth-Anything-V2-Metric-Indoor-Large-hf"
    unidepth_model: str = "lpiccinelli/unidepth-v2-vitl14"
    depth_statistic: str = "median"  # median | mean | p25 (statistic over the object's mask)

    # -- vqa: a vision-language model ---------------------------------------------------------------
    vqa_backend: str = "openai"  # openai (any OpenAI-compatible endpoint) | transformers (local)
    vqa_base_url: str | None = None  # None: the OpenAI API (or OPENAI_BASE_URL)
    vqa_api_key: str | None = None  # None: OPENAI_API_KEY, else a placeholder for local servers
    vqa_model: str = "gpt-4o"  # the model name sent to the endpoint
    vqa_local_model: str = "Qwen/Qwen2.5-VL-3B-Instruct"  # transformers backend: id or path
    vqa_max_tokens: int = 16
    vqa_timeout_s: float = 60.0
    vqa_box_width: int = 0  # outline width of the drawn box; 0: scaled to the image

    # -- same_object / caching ----------------------------------------------------------------------
    same_object_iou: float = 0.5  # mask IoU (box IoU without masks) above which two boxes agree
    cache_images: int = 16  # per-image caches kept (least recently used dropped)

    # -- multi-view modules (questions about several frames of one scene) -------------------------
    tracker_model: str = "facebook/sam2.1-hiera-tiny"  # same_object_across: SAM 2 video predictor
    track_iou: float = 0.5  # box IoU of the followed mask with bbox2 above which they are one object
    pose_backend: str = "vggt"  # objects_3d, camera_pose, room_layout: cameras of all frames at once
    vggt_model: str = "facebook/VGGT-1B"  # vggt backend: model id or local path
    merge_distance: float = 0.4  # metres between 3D box centres under which two frames' boxes merge
    room_trim_percent: float = 0.5  # room extent ignores this share of points at each end
    floor_percent: float = 1.0  # the floor is this percentile of the points' heights


TORCH_DTYPES = ("auto", "float32", "float16", "bfloat16")

SECTION = "vision"
"""The configuration section these settings are read from (`[vision]`, `VADAR_VISION_<FIELD>`)."""


def setting_name(field_name: str) -> str:
    """How a user sets one field: the TOML key and the environment variable."""
    return f"[{SECTION}] {field_name} (env VADAR_{SECTION.upper()}_{field_name.upper()})"
