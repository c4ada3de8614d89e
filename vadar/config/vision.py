"""The checks of the `[vision]` section: its dataclass lives with the modules it configures
(`base_modules.real.config`, which imports nothing of vadar), its rules here, beside the others.

Backend names are left to the modules, which refuse an unknown one in one line when they are built.
"""

from __future__ import annotations

from collections.abc import Mapping

from base_modules.real.config import TORCH_DTYPES
from vadar.config.checks import DAY_S, Check, HeaderText, HttpUrl, OneOf, Range

_SHARE = Range(0.0, 1.0)
_AT_LEAST_0 = Range(0)

VISION_CHECKS: Mapping[str, Check] = {
    "dtype": OneOf(TORCH_DTYPES),
    "box_threshold": _SHARE, "text_threshold": _SHARE, "nms_iou": _SHARE, "same_object_iou": _SHARE,
    "track_iou": _SHARE,
    # every count has a ceiling, as in the other sections
    "max_detections": Range(1, 10_000), "vqa_max_tokens": Range(1, 1_048_576), "cache_images": Range(1, 10_000),
    "vqa_box_width": Range(0, 1000),
    "mask_box_margin": _AT_LEAST_0, "merge_distance": _AT_LEAST_0,
    "vqa_base_url": HttpUrl(), "vqa_api_key": HeaderText(),
    "vqa_timeout_s": Range(0, DAY_S, above=True, unit="a day"),
    "room_trim_percent": Range(0.0, 50.0, below=True),  # trimmed at each end: half is all of it
    "floor_percent": Range(0.0, 100.0),
}
