"""The SAM 2 video tracker behind `same_object_across`, on a tiny random-weight `Sam2VideoModel`
saved to disk and loaded back through the module's own `from_pretrained` path (no download):
lazy loading, device, preprocessing, mask shapes at the second frame's size, caching, the IoU
decision and the error for missing weights. Run with `pytest -m vision` (the `vision` extra)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = pytest.importorskip("transformers")

from PIL import Image as PILImage  # noqa: E402

from base_modules.real import ModelWeightsError, RealModulesConfig, forget_models  # noqa: E402
from base_modules.real.perception import Perception  # noqa: E402
from base_modules.real.scene_graph import RealSameObjectAcross, real_view_modules  # noqa: E402
from base_modules.types import Image  # noqa: E402

pytestmark = pytest.mark.vision


def tiny_sam2_video(path) -> None:
    """The smallest config the video model runs with: its memory path needs a hidden size that
    is a multiple of the 64 memory channels (here 128), and rope sizes matching the 8x8 features."""
    torch.manual_seed(0)
    backbone = tf.Sam2HieraDetConfig(hidden_size=12, image_size=128, blocks_per_stage=[1, 2, 7, 2],
                                     embed_dim_per_stage=[12, 24, 48, 96])
    vision = tf.Sam2VisionConfig(backbone_config=backbone, backbone_channel_list=[96, 48, 24, 12],
                                 backbone_feature_sizes=[[32, 32], [16, 16], [8, 8]], fpn_hidden_size=128)
    config = tf.Sam2VideoConfig(
        vision_config=vision, image_size=128, num_maskmem=3,
        prompt_encoder_config={"image_size": 128, "patch_size": 16, "mask_input_channels": 8, "hidden_size": 128},
        mask_decoder_config={"hidden_size": 128, "mlp_dim": 64, "num_attention_heads": 4, "iou_head_hidden_dim": 32},
        memory_attention_hidden_size=128, memory_attention_num_layers=1,
        memory_attention_feed_forward_hidden_size=32, memory_attention_rope_feat_sizes=[8, 8],
        memory_encoder_hidden_size=128, memory_encoder_output_channels=64, mask_downsampler_embed_dim=128,
        memory_fuser_embed_dim=128, memory_fuser_intermediate_dim=32, memory_fuser_num_layers=1)
    tf.Sam2VideoModel(config).save_pretrained(path)


@pytest.fixture(scope="module")
def tracker_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-sam2-video") / "tracker"
    tiny_sam2_video(path)
    yield path
    forget_models()


@pytest.fixture()
def config(tracker_dir) -> RealModulesConfig:
    return RealModulesConfig(device="cpu", offline=True, tracker_model=str(tracker_dir), segmenter_backend="none")


def frame(tmp_path, name: str, width: int, height: int, seed: int) -> Image:
    rng = np.random.default_rng(seed)
    path = tmp_path / f"{name}.png"
    PILImage.fromarray(rng.integers(0, 255, (height, width, 3), dtype=np.uint8)).save(path)
    return Image(image_id=name, path=str(path), width=width, height=height)


def test_tracker_loads_lazily_and_follows_into_the_second_frame(config, tmp_path):
    first, second = frame(tmp_path, "f0", 200, 120, 0), frame(tmp_path, "f1", 160, 90, 1)
    perception = Perception(config)
    modules = real_view_modules(perception=perception, poses=object())
    across = modules.same_object_across
    assert not across.loaded and across.tracker.model is None
    answer = across(first, [20, 10, 90, 80], second, [10, 10, 60, 50])
    assert isinstance(answer, bool)
    tracker = across.tracker
    assert tracker.model.device.type == "cpu" and tracker.size == 128
    assert next(tracker.model.parameters()).dtype == torch.float32
    mask = tracker.follow(perception.pixels(first), np.array([20.0, 10.0, 90.0, 80.0]), perception.pixels(second))
    assert mask.shape == (90, 160) and mask.dtype == bool  # the second frame's size, not 128x128
    across(first, [20, 10, 90, 80], second, [0, 0, 30, 30])  # same box followed: computed once
    assert perception.cache.misses["track"] == 1 and perception.cache.hits["track"] == 1


class FixedTracker:
    """Follows every box to one known mask, to check the decision rule on its own."""

    def __init__(self, mask: np.ndarray) -> None:
        self.mask, self.calls = mask, 0

    def load(self) -> None:
        pass

    def follow(self, first, box, second) -> np.ndarray:
        self.calls += 1
        return self.mask


def test_same_object_across_compares_the_followed_mask_with_bbox2(config, tmp_path):
    first, second = frame(tmp_path, "a", 200, 120, 2), frame(tmp_path, "b", 200, 120, 3)
    mask = np.zeros((120, 200), bool)
    mask[40:80, 100:150] = True  # the object reappears at [100, 40, 150, 80]
    across = RealSameObjectAcross(Perception(config), FixedTracker(mask))
    assert across(first, [0, 0, 50, 50], second, [100, 40, 150, 80])
    assert across(first, [0, 0, 50, 50], second, [98, 38, 148, 82])  # IoU 0.8
    assert not across(first, [0, 0, 50, 50], second, [10, 40, 60, 80])  # another object
    lost = RealSameObjectAcross(Perception(config), FixedTracker(np.zeros((120, 200), bool)))
    assert not lost(first, [0, 0, 50, 50], second, [100, 40, 150, 80])  # the tracker lost it
    strict = RealSameObjectAcross(Perception(RealModulesConfig(**{**config.__dict__, "track_iou": 0.9})),
                                  FixedTracker(mask))
    assert not strict(first, [0, 0, 50, 50], second, [98, 38, 148, 82])


def test_missing_tracker_weights_give_one_clear_error(config, tmp_path):
    first, second = frame(tmp_path, "c", 64, 64, 4), frame(tmp_path, "d", 64, 64, 5)
    config.tracker_model = "vadar-test/no-such-tracker"
    across = real_view_modules(config, poses=object()).same_object_across
    with pytest.raises(ModelWeightsError) as err:
        across(first, [0, 0, 10, 10], second, [0, 0, 10, 10])
    text = str(err.value)
    assert "vadar-test/no-such-tracker" in text and "VADAR_VISION_TRACKER_MODEL" in text
    assert "\n" not in text and err.value.__cause__ is None
