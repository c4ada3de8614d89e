"""Open-vocabulary detection with GroundingDINO: transformers classes, or groundingdino-py.

Both return boxes in pixels of the original image, thresholded on box and text scores; NMS and
segmentation happen in `Perception`, so they are the same whichever backend ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.config import RealModulesConfig, setting_name
from base_modules.real.loading import (
    ModelWeightsError,
    TransformersBackend,
    require_package,
    shared_model,
    torch_device,
)


@dataclass
class RawDetections:
    boxes: np.ndarray  # (N, 4) x0, y0, x1, y1 in original image pixels
    scores: np.ndarray  # (N,)
    labels: list[str]


def grounding_caption(query: str) -> str:
    """GroundingDINO expects lower-case phrases ending in a period."""
    return query.strip().lower().rstrip(".") + "."


class TransformersGroundingDino(TransformersBackend):
    """`GroundingDinoForObjectDetection` with the PIL image processor (no torchvision needed)."""

    setting = "detector_model"
    kind = "grounding-dino"

    def build(self, tf: Any, device: str, dtype: Any) -> tuple[Any, Any]:
        image_processor = self.pretrained(tf.GroundingDinoImageProcessorPil.from_pretrained)
        tokenizer = self.pretrained(tf.AutoTokenizer.from_pretrained)
        model = self.pretrained(tf.GroundingDinoForObjectDetection.from_pretrained, dtype=dtype)
        processor = tf.GroundingDinoProcessor(image_processor=image_processor, tokenizer=tokenizer)
        return model.to(device).eval(), processor

    def detect(self, pixels: Any, query: str) -> RawDetections:
        import torch

        self.load()
        inputs = self.processor(images=pixels, text=grounding_caption(query), return_tensors="pt")
        dtype = next(self.model.parameters()).dtype
        inputs = {k: (v.to(self.model.device, dtype) if v.is_floating_point() else v.to(self.model.device))
                  for k, v in inputs.items()}
        with torch.inference_mode():
            outputs = self.model(**inputs)
        outputs.logits, outputs.pred_boxes = outputs.logits.float(), outputs.pred_boxes.float()
        result = self.processor.post_process_grounded_object_detection(
            outputs, inputs["input_ids"], threshold=self.config.box_threshold,
            text_threshold=self.config.text_threshold, target_sizes=[(pixels.height, pixels.width)],
        )[0]
        labels = result["text_labels"] if "text_labels" in result else result.get("labels", [])
        return RawDetections(result["boxes"].cpu().numpy().reshape(-1, 4),
                             result["scores"].cpu().numpy().reshape(-1), [str(t) for t in labels])


class GroundingDinoPy:
    """The original GroundingDINO code (`groundingdino-py`), from a config file and a checkpoint."""

    def __init__(self, config: RealModulesConfig) -> None:
        self.config = config
        self.model: Any = None

    def load(self) -> None:
        if self.model is not None:
            return
        cfg = self.config
        require_package("groundingdino", "pip install groundingdino-py (needs torchvision)",
                        setting_name("detector_backend"))
        if cfg.groundingdino_config is None or cfg.groundingdino_checkpoint is None:
            raise ModuleError(
                "the groundingdino-py backend needs "
                f"{setting_name('groundingdino_config')} and {setting_name('groundingdino_checkpoint')}"
            )
        for path in (cfg.groundingdino_config, cfg.groundingdino_checkpoint):
            if not path.expanduser().exists():
                raise ModelWeightsError(f"groundingdino-py: file {path} does not exist")
        from groundingdino.util.inference import load_model

        device = torch_device(cfg)
        key = ("groundingdino-py", str(cfg.groundingdino_checkpoint), device)
        self.model = shared_model(key, lambda: load_model(str(cfg.groundingdino_config),
                                                          str(cfg.groundingdino_checkpoint), device=device))

    def detect(self, pixels: Any, query: str) -> RawDetections:
        import groundingdino.datasets.transforms as T
        from groundingdino.util.inference import predict

        self.load()
        transform = T.Compose([T.RandomResize([800], max_size=1333), T.ToTensor(),
                               T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        tensor, _ = transform(pixels.convert("RGB"), None)
        boxes, logits, phrases = predict(self.model, tensor, grounding_caption(query),
                                         self.config.box_threshold, self.config.text_threshold,
                                         device=torch_device(self.config))
        return RawDetections(cxcywh_to_pixels(boxes.cpu().numpy(), pixels.width, pixels.height),
                             logits.cpu().numpy().reshape(-1), list(phrases))


def cxcywh_to_pixels(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Normalised (cx, cy, w, h) -> pixel (x0, y0, x1, y1)."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    cx, cy, w, h = boxes.T
    return np.stack([(cx - w / 2) * width, (cy - h / 2) * height,
                     (cx + w / 2) * width, (cy + h / 2) * height], axis=1)


def build_detector(config: RealModulesConfig) -> TransformersGroundingDino | GroundingDinoPy:
    backend = config.detector_backend
    if backend == "auto":
        import importlib.util
        use_py = config.groundingdino_checkpoint is not None and importlib.util.find_spec("groundingdino")
        backend = "groundingdino-py" if use_py else "transformers"
    if backend == "transformers":
        return TransformersGroundingDino(config)
    if backend == "groundingdino-py":
        return GroundingDinoPy(config)
    raise ModuleError(f"{setting_name('detector_backend')}: unknown backend {config.detector_backend!r}; "
                      "choose auto, transformers or groundingdino-py")
