"""Real modules end to end on CPU with tiny random-weight models saved to disk and loaded back.

No weights can be downloaded here, so each model is built from a tiny config, saved with
`save_pretrained` and loaded by the modules' own `from_pretrained` path: preprocessing, output
shapes, coordinates in original image pixels, mask-tight boxes, caching and errors all run as
they do with real weights. Run with `pytest -m vision` (needs the `vision` extra); set
`VADAR_TEST_DEVICE=cuda` to run the same tests on a GPU (models then load in fp16).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = pytest.importorskip("transformers")

from PIL import Image as PILImage  # noqa: E402

from base_modules.real import ModelWeightsError, RealModulesConfig, forget_models, real_modules  # noqa: E402
from base_modules.real.boxes import mask_to_box  # noqa: E402
from base_modules.real.perception import Perception  # noqa: E402
from base_modules.types import Image  # noqa: E402

pytestmark = pytest.mark.vision

W, H = 200, 120
DEVICE = os.environ.get("VADAR_TEST_DEVICE", "cpu")
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "red", "cube", "object", "chair", "table"]


def tiny_grounding_dino(path) -> None:
    torch.manual_seed(0)
    swin = tf.SwinConfig(window_size=7, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1],
                         image_size=64, out_indices=[2, 3, 4])
    text = {"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": 8, "max_position_embeddings": 64, "vocab_size": len(VOCAB)}
    config = tf.GroundingDinoConfig(
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=8, decoder_ffn_dim=8, num_queries=20, num_feature_levels=4, encoder_n_points=2,
        decoder_n_points=2, use_timm_backbone=False, backbone_config=swin, max_text_len=32, text_config=text)
    tf.GroundingDinoForObjectDetection(config).save_pretrained(path)
    tf.BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)}).save_pretrained(path)
    tf.GroundingDinoImageProcessorPil(size={"shortest_edge": 64, "longest_edge": 96}).save_pretrained(path)


def tiny_sam2(path) -> None:
    torch.manual_seed(0)
    backbone = tf.Sam2HieraDetConfig(hidden_size=12, image_size=128, blocks_per_stage=[1, 2, 7, 2],
                                     embed_dim_per_stage=[12, 24, 48, 96])
    vision = tf.Sam2VisionConfig(backbone_config=backbone, backbone_channel_list=[96, 48, 24, 12],
                                 backbone_feature_sizes=[[32, 32], [16, 16], [8, 8]], fpn_hidden_size=32)
    config = tf.Sam2Config(
        vision_config=vision,
        prompt_encoder_config=tf.Sam2PromptEncoderConfig(image_size=128, patch_size=16, mask_input_channels=8,
                                                         hidden_size=32),
        mask_decoder_config=tf.Sam2MaskDecoderConfig(hidden_size=32, mlp_dim=64, num_attention_heads=4,
                                                     iou_head_hidden_dim=32))
    tf.Sam2Model(config).save_pretrained(path)


def tiny_depth_anything(path, kind: str = "metric") -> None:
    torch.manual_seed(0)
    backbone = tf.Dinov2Config(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                               image_size=56, patch_size=14, out_features=["stage1", "stage2"],
                               reshape_hidden_states=False)
    config = tf.DepthAnythingConfig(backbone_config=backbone, reassemble_hidden_size=16, neck_hidden_sizes=[8, 16],
                                    fusion_hidden_size=16, head_hidden_size=8, reassemble_factors=[2, 1],
                                    depth_estimation_type=kind, max_depth=20)
    tf.DepthAnythingForDepthEstimation(config).save_pretrained(path)
    tf.DPTImageProcessorPil(size={"height": 56, "width": 56}, keep_aspect_ratio=True, ensure_multiple_of=14,
                            image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225]).save_pretrained(path)


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-models")
    tiny_grounding_dino(root / "gdino")
    tiny_sam2(root / "sam2")
    tiny_depth_anything(root / "depth")
    tiny_depth_anything(root / "relative-depth", kind="relative")
    yield root
    forget_models()


@pytest.fixture()
def config(model_dirs) -> RealModulesConfig:
    return RealModulesConfig(device=DEVICE, offline=True, detector_model=str(model_dirs / "gdino"),
                             segmenter_model=str(model_dirs / "sam2"), depth_model=str(model_dirs / "depth"),
                             box_threshold=0.0, text_threshold=0.0, max_detections=5)


@pytest.fixture()
def image(tmp_path) -> Image:
    rng = np.random.default_rng(0)
    path = tmp_path / "scene.png"
    PILImage.fromarray(rng.integers(0, 255, (H, W, 3), dtype=np.uint8)).save(path)
    return Image(image_id="scene", path=str(path), width=W, height=H)


def test_loc_runs_detector_and_segmenter_and_returns_mask_tight_boxes(config, image):
    perception = Perception(config)
    modules = real_modules(perception=perception)
    boxes = modules.loc(image, "red cube")
    assert 0 < len(boxes) <= 5
    detections = perception.cache.entry(image).detections["red cube"]
    for box, det in zip(boxes, detections):
        assert len(box) == 4 and all(isinstance(v, float) for v in box)
        assert 0 <= box[0] < box[2] <= W and 0 <= box[1] < box[3] <= H
        if det.mask is not None:
            assert det.mask.shape == (H, W) and det.mask.dtype == bool  # original size, not 128x128
            assert box == mask_to_box(det.mask)
    assert modules.loc(image, "Red cube.") == boxes
    assert perception.cache.misses["loc"] == 1 and perception.cache.hits["loc"] == 1
    assert perception.cache.misses["image_embedding"] == 1


def test_detector_boxes_are_in_original_image_pixels(config, image):
    """A known normalised prediction comes back in pixels of the 200x120 image, not the 96x58 input."""
    perception = Perception(RealModulesConfig(**{**config.__dict__, "segmenter_backend": "none"}))
    perception.detector.load()

    def fixed_prediction(module, args, output):
        output.logits = torch.full_like(output.logits, float("-inf"))  # as past the text
        output.logits[0, 0, :4] = 20.0
        output.pred_boxes = torch.zeros_like(output.pred_boxes)
        output.pred_boxes[0, 0] = torch.tensor([0.5, 0.5, 0.5, 0.5])
        return output

    handle = perception.detector.model.register_forward_hook(fixed_prediction)
    try:
        detections = perception.locate(image, "chair")
    finally:
        handle.remove()
    assert [d.detector_box for d in detections] == [[50.0, 30.0, 150.0, 90.0]]
    assert detections[0].box == detections[0].detector_box  # no segmenter: the detector's box


def test_depth_map_is_metric_full_size_and_computed_once(config, image):
    perception = Perception(config)
    modules = real_modules(perception=perception)
    box = modules.loc(image, "objects")[0]
    value = modules.depth(image, box)
    assert np.isfinite(value) and 0 < value <= 20
    assert perception.depth_map(image).shape == (H, W)
    modules.depth(image, [0, 0, 50, 50])
    assert perception.cache.misses["depth_map"] == 1 and perception.cache.hits["depth_map"] >= 2


def test_size_and_same_object_use_the_cached_masks(config, image):
    modules = real_modules(config)
    boxes = modules.loc(image, "table")
    w, h = modules.get_2D_object_size(image, boxes[0])
    assert (w, h) == (boxes[0][2] - boxes[0][0], boxes[0][3] - boxes[0][1])
    assert modules.same_object(image, boxes[0], boxes[0])


def test_models_load_once_per_process_on_the_test_device_in_its_auto_dtype(config):
    first, second = Perception(config), Perception(config)
    first.detector.load(), second.detector.load()
    assert first.detector.model is second.detector.model
    assert first.detector.model.device.type == torch.device(DEVICE).type
    expected = torch.float16 if DEVICE.startswith("cuda") else torch.float32  # dtype "auto"
    assert next(first.detector.model.parameters()).dtype == expected


def test_relative_depth_model_is_refused(config, model_dirs):
    config.depth_model = str(model_dirs / "relative-depth")
    with pytest.raises(ModelWeightsError, match="relative depth.*Metric"):
        real_modules(config).depth.load()


def test_missing_weights_give_one_clear_error(config, tmp_path):
    config.detector_model = "vadar-test/no-such-detector"
    with pytest.raises(ModelWeightsError) as err:
        real_modules(config).loc.load()
    text = str(err.value)
    assert "vadar-test/no-such-detector" in text and "VADAR_VISION_DETECTOR_MODEL" in text
    assert "Traceback" not in text and err.value.__cause__ is None
    config.detector_model = str(tmp_path / "missing")
    with pytest.raises(ModelWeightsError, match="missing does not exist"):
        real_modules(config).loc.load()
