"""Metric monocular depth maps: UniDepth when installed, else a transformers depth model.

A backend returns one (H, W) float32 map in metres at the original image size; `Perception`
caches it per image and reduces it over an object's mask.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.config import RealModulesConfig, setting_name
from base_modules.real.loading import ModelWeightsError, TransformersBackend, package_model

UNIDEPTH_INSTALL = "pip install 'git+https://github.com/lpiccinelli-eth/UniDepth'"


class TransformersDepth(TransformersBackend):
    """`AutoModelForDepthEstimation` (Depth Anything V2 metric, ZoeDepth, ...) with its processor."""

    setting = "depth_model"
    kind = "depth"

    def build(self, tf: Any, device: str, dtype: Any) -> tuple[Any, Any]:
        processor = self.pretrained(tf.AutoImageProcessor.from_pretrained)
        model = self.pretrained(tf.AutoModelForDepthEstimation.from_pretrained, dtype=dtype)
        kind = getattr(model.config, "depth_estimation_type", None)
        if model.config.model_type == "depth_anything" and kind != "metric":
            raise ModelWeightsError(
                f"{setting_name(self.setting)}: '{self.model_id}' predicts relative depth, but "
                "depth() returns metres; use a metric checkpoint such as "
                "depth-anything/Depth-Anything-V2-Metric-Indoor-Large-hf (or -Outdoor-)"
            )
        return model.to(device).eval(), processor

    def depth_map(self, pixels: Any) -> np.ndarray:
        import torch

        self.load()
        inputs = self.processor(images=pixels.convert("RGB"), return_tensors="pt")
        dtype = next(self.model.parameters()).dtype
        values = inputs["pixel_values"].to(self.model.device, dtype)
        with torch.inference_mode():
            outputs = self.model(pixel_values=values)
        outputs.predicted_depth = outputs.predicted_depth.float()
        result = self.processor.post_process_depth_estimation(
            outputs, target_sizes=[(pixels.height, pixels.width)])[0]
        return result["predicted_depth"].cpu().numpy().astype(np.float32)


class UniDepth:
    """UniDepth V1/V2 (not on PyPI); predicts metric depth and its own camera intrinsics."""

    def __init__(self, config: RealModulesConfig) -> None:
        self.config = config
        self.model: Any = None

    def load(self) -> None:
        if self.model is None:
            self.model = package_model(self.config, "unidepth", UNIDEPTH_INSTALL, "depth_backend",
                                       "unidepth_model", self._model_class)

    def _model_class(self) -> Any:
        from unidepth import models

        return models.UniDepthV1 if "v1" in self.config.unidepth_model.lower() else models.UniDepthV2

    def depth_map(self, pixels: Any) -> np.ndarray:
        import torch

        self.load()
        rgb = torch.from_numpy(np.asarray(pixels.convert("RGB")).copy()).permute(2, 0, 1)
        with torch.inference_mode():
            predictions = self.model.infer(rgb.to(self.model.device))
        depth = predictions["depth"].float().squeeze().cpu().numpy()
        return depth.astype(np.float32)


def build_depth(config: RealModulesConfig) -> TransformersDepth | UniDepth:
    backend = config.depth_backend
    if backend == "auto":
        backend = "unidepth" if importlib.util.find_spec("unidepth") else "transformers"
    if backend == "transformers":
        return TransformersDepth(config)
    if backend == "unidepth":
        return UniDepth(config)
    raise ModuleError(f"{setting_name('depth_backend')}: unknown backend {config.depth_backend!r}; "
                      "choose auto, unidepth or transformers")


def object_depth(depth_map: np.ndarray, region: np.ndarray, statistic: str) -> float | None:
    """Robust depth of an object: a statistic over its pixels with a valid (finite, > 0) depth."""
    values = depth_map[region]
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return None
    if statistic == "median":
        return float(np.median(values))
    if statistic == "mean":
        return float(values.mean())
    if statistic == "p25":
        return float(np.percentile(values, 25))
    raise ModuleError(f"{setting_name('depth_statistic')}: unknown statistic {statistic!r}; "
                      "choose median, mean or p25")
