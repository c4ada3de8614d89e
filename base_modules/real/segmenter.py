"""Box-prompted segmentation with SAM2: transformers `Sam2Model`, or the `sam2` package.

The transformers backend does its own resize and normalisation (the SAM2 image processor in
transformers needs torchvision), computes the image embedding once per image and decodes one mask
per box. Masks come back at the original image size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.config import RealModulesConfig, setting_name
from base_modules.real.loading import (
    ModelWeightsError,
    load_pretrained,
    require_package,
    shared_model,
    torch_device,
    torch_dtype,
)

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def sam_input_size(model_config: Any) -> int:
    size = model_config.vision_config.backbone_config.image_size
    return int(size[0] if isinstance(size, (list, tuple)) else size)


def sam_pixels(pixels: Any, size: int) -> np.ndarray:
    """RGB PIL image -> (1, 3, size, size) float32, resized without keeping aspect (as SAM2 does)."""
    from PIL import Image as PILImage

    resized = pixels.convert("RGB").resize((size, size), PILImage.Resampling.BILINEAR)
    array = (np.asarray(resized, dtype=np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD
    return array.transpose(2, 0, 1)[None].copy()


def sam_boxes(boxes: np.ndarray, width: int, height: int, size: int) -> np.ndarray:
    """Boxes in original pixels -> boxes in the model's square input frame."""
    scale = np.array([size / width, size / height, size / width, size / height])
    return np.asarray(boxes, dtype=np.float64).reshape(-1, 4) * scale


def load_sam2(config: RealModulesConfig, class_name: str, setting: str) -> Any:
    """A transformers SAM 2 model (`Sam2Model`, `Sam2VideoModel`) named by `setting`, shared per process."""
    import transformers as tf

    device = torch_device(config)
    dtype = torch_dtype(config, device)
    model_id = getattr(config, setting)

    def build() -> Any:
        model = load_pretrained(getattr(tf, class_name).from_pretrained, model_id,
                                setting=setting_name(setting), config=config, dtype=dtype)
        return model.to(device).eval()

    return shared_model((class_name, model_id, device, str(dtype)), build)


class Sam2Loader:
    """A transformers SAM 2 model loaded on first use, with the square input size it expects."""

    model_class = "Sam2Model"
    setting = "segmenter_model"

    def __init__(self, config: RealModulesConfig) -> None:
        self.config = config
        self.model: Any = None
        self.size = 1024

    def load(self) -> None:
        if self.model is None:
            self.model = load_sam2(self.config, self.model_class, self.setting)
            self.size = sam_input_size(self.model.config)


class TransformersSam2(Sam2Loader):

    def embed(self, pixels: Any) -> Any:
        """The image embedding: the expensive half, computed once per image by the caller's cache."""
        import torch

        self.load()
        dtype = next(self.model.parameters()).dtype
        values = torch.from_numpy(sam_pixels(pixels, self.size)).to(self.model.device, dtype)
        with torch.inference_mode():
            return self.model.get_image_embeddings(values)

    def segment(self, pixels: Any, boxes: np.ndarray, embedding: Any) -> np.ndarray:
        """(N, H, W) boolean masks, one per box, at the original image size."""
        import torch
        import torch.nn.functional as F

        self.load()
        if len(boxes) == 0:
            return np.zeros((0, pixels.height, pixels.width), dtype=bool)
        scaled = sam_boxes(boxes, pixels.width, pixels.height, self.size)
        prompt = torch.as_tensor(scaled, dtype=torch.float32, device=self.model.device)[None]
        with torch.inference_mode():
            out = self.model(image_embeddings=embedding, input_boxes=prompt, multimask_output=False)
            low_res = out.pred_masks[0, :, 0:1].float()  # (N, 1, h, w) logits
            masks = F.interpolate(low_res, (pixels.height, pixels.width), mode="bilinear",
                                  align_corners=False)[:, 0] > 0
        return masks.cpu().numpy()


class Sam2Package:
    """The reference `sam2` package (`SAM2ImagePredictor`); keeps the last image set."""

    def __init__(self, config: RealModulesConfig) -> None:
        self.config = config
        self.predictor: Any = None
        self._current: int | None = None  # id of the image the predictor holds

    def load(self) -> None:
        if self.predictor is not None:
            return
        cfg, device = self.config, torch_device(self.config)
        require_package("sam2", "pip install sam2 (needs torchvision)", setting_name("segmenter_backend"))
        from sam2.sam2_image_predictor import SAM2ImagePredictor

        def build() -> Any:
            if cfg.sam2_checkpoint is not None:
                from sam2.build_sam import build_sam2

                if not cfg.sam2_checkpoint.expanduser().exists():
                    raise ModelWeightsError(f"{setting_name('sam2_checkpoint')}: {cfg.sam2_checkpoint} does not exist")
                if not cfg.sam2_config:
                    raise ModuleError(f"{setting_name('sam2_config')} is needed with a local sam2_checkpoint")
                return SAM2ImagePredictor(build_sam2(cfg.sam2_config, str(cfg.sam2_checkpoint), device=device))
            return load_pretrained(SAM2ImagePredictor.from_pretrained, cfg.segmenter_model,
                                   setting=setting_name("segmenter_model"), config=cfg, device=device)

        self.predictor = shared_model(("sam2-package", cfg.segmenter_model, str(cfg.sam2_checkpoint), device), build)

    def embed(self, pixels: Any) -> Any:
        self.load()
        self.predictor.set_image(np.asarray(pixels.convert("RGB")))
        self._current = id(pixels)
        return self._current

    def segment(self, pixels: Any, boxes: np.ndarray, embedding: Any) -> np.ndarray:
        if self._current != id(pixels):
            self.embed(pixels)
        masks, _, _ = self.predictor.predict(box=np.asarray(boxes, dtype=np.float32), multimask_output=False)
        masks = np.asarray(masks)
        return masks.reshape(len(boxes), pixels.height, pixels.width) > 0


def build_segmenter(config: RealModulesConfig) -> TransformersSam2 | Sam2Package | None:
    backend = config.segmenter_backend
    if backend == "auto":
        backend = "sam2" if config.sam2_checkpoint is not None else "transformers"
    if backend == "none":
        return None
    if backend == "transformers":
        return TransformersSam2(config)
    if backend == "sam2":
        return Sam2Package(config)
    raise ModuleError(f"{setting_name('segmenter_backend')}: unknown backend {config.segmenter_backend!r}; "
                      "choose auto, transformers, sam2 or none")
