"""Real modules without torch: geometry, caching, mask lookup, VQA requests, configuration errors.

Backends are replaced by small fakes with the same methods, so the shared `Perception` logic
(NMS, mask-tight boxes, per-prompt and per-image caching, depth over masks) runs in the default suite.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import openai
import pytest
from PIL import Image as PILImage

from base_modules.module import ModuleError
from base_modules.real import PerceptionCache, RealModulesConfig, real_modules
from base_modules.real.boxes import box_iou, mask_to_box, nms, normalise_prompt
from base_modules.real.detector import RawDetections, cxcywh_to_pixels
from base_modules.real.loading import ModelWeightsError, load_pretrained
from base_modules.real.perception import Perception
from base_modules.real.vlm import OpenAIVLM, draw_box, normalise_answer
from base_modules.types import Image

W, H = 80, 60


class FakeDetector:
    """Two overlapping detections of one object plus a second object, for any prompt."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def load(self) -> None: ...

    def detect(self, pixels, query):
        self.calls.append(query)
        boxes = np.array([[10, 10, 30, 40], [11, 11, 31, 41], [50, 5, 90, 30]], dtype=float)
        return RawDetections(boxes, np.array([0.9, 0.8, 0.7]), [query] * 3)


class FakeSegmenter:
    """Mask = the box shrunk by 2 px, so tight boxes differ from detector boxes."""

    def __init__(self) -> None:
        self.embeds = 0
        self.segments = 0

    def load(self) -> None: ...

    def embed(self, pixels):
        self.embeds += 1
        return "embedding"

    def segment(self, pixels, boxes, embedding):
        self.segments += 1
        masks = np.zeros((len(boxes), pixels.height, pixels.width), dtype=bool)
        for m, (x0, y0, x1, y1) in zip(masks, np.asarray(boxes).astype(int)):
            m[y0 + 2:y1 - 2, x0 + 2:x1 - 2] = True
        return masks


class FakeDepth:
    """Depth = 1 m on the left object's mask region, 5 m elsewhere (the box edges included)."""

    def __init__(self) -> None:
        self.calls = 0

    def load(self) -> None: ...

    def depth_map(self, pixels):
        self.calls += 1
        depth = np.full((pixels.height, pixels.width), 5.0, dtype=np.float32)
        depth[12:38, 12:28] = 1.0
        return depth


@pytest.fixture()
def image(tmp_path) -> Image:
    path = tmp_path / "scene.png"
    PILImage.new("RGB", (W, H), (40, 80, 120)).save(path)
    return Image(image_id="scene", path=str(path), width=W, height=H)


@pytest.fixture()
def perception() -> Perception:
    return Perception(RealModulesConfig(), detector=FakeDetector(), segmenter=FakeSegmenter(),
                      depth=FakeDepth(), vlm=None)


def test_importing_real_modules_does_not_import_torch():
    code = "import sys, base_modules.real, base_modules.registry; print('torch' in sys.modules)"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_nms_is_class_agnostic_and_keeps_the_best_first():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.5]])
    assert nms(boxes, [0.5, 0.9, 0.3, 0.4], 0.5) == [1, 2]
    assert nms(boxes, [0.5, 0.9, 0.3, 0.4], 0.99) == [1, 0, 3, 2]
    assert nms(np.zeros((0, 4)), [], 0.5) == []


def test_box_iou_and_mask_to_box():
    assert box_iou([0, 0, 10, 10], [[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]]).round(3).tolist() == [[1.0, 0.333, 0.0]]
    mask = np.zeros((6, 8), dtype=bool)
    mask[2:4, 3:7] = True
    assert mask_to_box(mask) == [3.0, 2.0, 7.0, 4.0]  # pixel edges: 4 wide, 2 high
    assert mask_to_box(np.zeros((3, 3), dtype=bool)) is None


def test_cxcywh_to_pixels_uses_original_image_size():
    assert cxcywh_to_pixels(np.array([[0.5, 0.5, 0.5, 0.5]]), 200, 100).tolist() == [[50, 25, 150, 75]]


def test_prompt_normalisation():
    assert normalise_prompt("  Red   Cube. ") == "red cube"
    assert normalise_prompt("objects") == normalise_prompt("All objects") == "object"
    with pytest.raises(ModuleError, match="empty"):
        normalise_prompt(" . ")
    with pytest.raises(ModuleError, match="must be a string"):
        normalise_prompt(3)


def test_loc_applies_nms_returns_mask_tight_boxes_and_caches_per_prompt(perception, image):
    modules = real_modules(perception=perception)
    boxes = modules.loc(image, "chair")
    # The two overlapping detections became one; boxes are tight around the masks and clipped.
    assert boxes == [[12.0, 12.0, 28.0, 38.0], [52.0, 7.0, 78.0, 28.0]]
    for _ in range(9):
        assert modules.loc(image, "Chair.") == boxes
    modules.loc(image, "objects")
    assert perception.detector.calls == ["chair", "object"]
    assert perception.segmenter.embeds == 1  # image embedding once per image
    assert perception.cache.hits["loc"] == 9 and perception.cache.misses["loc"] == 2


def test_depth_is_median_over_the_mask_and_the_map_is_computed_once(perception, image):
    modules = real_modules(perception=perception)
    left, right = modules.loc(image, "chair")
    assert modules.depth(image, left) == 1.0  # the mask, not the 5 m box edges or the centre pixel
    assert modules.depth(image, right) == 5.0
    assert modules.depth(image, [10, 10, 30, 40]) == 1.0  # the detector box finds the same mask
    assert perception.depth.calls == 1


def test_boxes_not_from_loc_are_segmented_on_demand_once(perception, image):
    modules = real_modules(perception=perception)
    assert modules.get_2D_object_size(image, [0, 0, 20, 20]) == (16.0, 16.0)
    assert modules.get_2D_object_size(image, [0, 0, 20, 20]) == (16.0, 16.0)
    assert perception.segmenter.segments == 1 and perception.cache.hits["mask"] == 1


def test_without_a_segmenter_boxes_stay_detector_boxes(image):
    perception = Perception(RealModulesConfig(segmenter_backend="none"), detector=FakeDetector(),
                            depth=FakeDepth())
    modules = real_modules(perception=perception)
    assert modules.loc(image, "chair")[0] == [10.0, 10.0, 30.0, 40.0]
    assert modules.depth(image, [10, 10, 30, 40]) == 1.0  # central half of the box
    assert modules.get_2D_object_size(image, [10, 10, 30, 40]) == (20.0, 30.0)


def test_same_object_uses_masks(perception, image):
    modules = real_modules(perception=perception)
    left, right = modules.loc(image, "chair")
    assert modules.same_object(image, left, [10, 10, 30, 40])
    assert not modules.same_object(image, left, right)


def test_bad_arguments_are_module_errors(perception, image):
    modules = real_modules(perception=perception)
    with pytest.raises(ModuleError, match="bbox"):
        modules.depth(image, [1, 2, 3])
    with pytest.raises(ModuleError, match="x_max < x_min"):
        modules.get_2D_object_size(image, [5, 0, 1, 1])
    with pytest.raises(ModuleError, match="Image handle"):
        modules.loc("scene.png", "chair")


def test_cache_is_lru_over_images(tmp_path):
    cache = PerceptionCache(max_images=2)
    images = [Image(f"i{n}", str(tmp_path / f"{n}.png"), 4, 4) for n in range(3)]
    for im in images:
        cache.get_or_compute("x", im, None, lambda: 1)
    assert len(cache) == 2 and cache.misses["x"] == 3
    cache.get_or_compute("x", images[0], None, lambda: 2)
    assert cache.misses["x"] == 4  # the first image was evicted


class FakeChat:
    """Stands in for `openai.OpenAI`: records requests, answers or fails."""

    def __init__(self, content: str | None = None, error: Exception | None = None) -> None:
        self.requests: list[dict] = []
        self.content, self.error = content, error
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request):
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        message = SimpleNamespace(content=self.content)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


def test_vqa_sends_the_marked_image_and_normalises_the_answer(image):
    client = FakeChat("Yes, it is red.")
    config = RealModulesConfig(vqa_model="my-vlm")
    perception = Perception(config, detector=FakeDetector(), segmenter=FakeSegmenter(), depth=FakeDepth(),
                            vqa_client=client)
    modules = real_modules(perception=perception)
    assert modules.vqa(image, "Is it red?", [10, 10, 30, 40]) == "yes"
    assert modules.vqa(image, "is it  red?", [10, 10, 30, 40]) == "yes"  # cached
    assert len(client.requests) == 1 and client.requests[0]["model"] == "my-vlm"
    parts = client.requests[0]["messages"][0]["content"]
    assert "Is it red?" in parts[0]["text"]
    assert parts[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_vqa_endpoint_failure_names_endpoint_and_settings():
    client = FakeChat(error=openai.OpenAIError("model not found"))
    vlm = OpenAIVLM(RealModulesConfig(vqa_base_url="http://vlm.test/v1"), client)
    with pytest.raises(ModuleError, match=r"vlm.test.*model not found.*VADAR_VISION_VQA_BASE_URL"):
        vlm.answer(PILImage.new("RGB", (8, 8)), "What color is it?")


@pytest.mark.parametrize("raw, expected", [
    ("Red.", "red"), ("The answer is", "answer is"), ("  'Metal'\nbecause", "metal"),
    ("No, it is not.", "no"), ("It is a large cube", "large cube"), ("Answer: blue", "blue"), ("", ""),
])
def test_answer_normalisation(raw, expected):
    assert normalise_answer(raw) == expected


def test_draw_box_marks_the_box_in_red():
    marked = draw_box(PILImage.new("RGB", (100, 100), (0, 0, 0)), np.array([10, 10, 50, 50]), 2)
    assert marked.getpixel((10, 30)) == (255, 0, 0) and marked.getpixel((30, 30)) == (0, 0, 0)


def test_missing_local_weights_name_the_path_and_the_setting(tmp_path):
    missing = tmp_path / "no-such-model"

    def never(*a, **k):
        raise AssertionError("must not be called for a missing path")

    with pytest.raises(ModelWeightsError, match=r"no-such-model does not exist.*save_pretrained"):
        load_pretrained(never, str(missing), setting="[vision] depth_model", config=RealModulesConfig())


def test_hub_failures_become_one_clean_line():
    def offline(model, **kwargs):
        assert kwargs["local_files_only"] is True
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files\nmore lines")

    with pytest.raises(ModelWeightsError) as err:
        load_pretrained(offline, "org/model", setting="[vision] detector_model",
                        config=RealModulesConfig(offline=True))
    message = str(err.value)
    assert "org/model" in message and "[vision] detector_model" in message
    assert "--local-dir" in message and "HF_HUB_OFFLINE" in message and "\n" not in message


def test_unknown_backend_names_fail_at_construction():
    with pytest.raises(ModuleError, match="detector_backend.*unknown backend 'yolo'"):
        Perception(RealModulesConfig(detector_backend="yolo"))
    with pytest.raises(ModuleError, match="depth_backend"):
        Perception(RealModulesConfig(depth_backend="midas"))
    with pytest.raises(ModuleError, match="vqa_backend"):
        Perception(RealModulesConfig(vqa_backend="clip"))


def test_unreachable_hub_fails_fast_with_a_clear_reason(monkeypatch):
    from base_modules.real import loading
    from base_modules.real.config import RealModulesConfig

    def from_pretrained(model, **kwargs):
        assert kwargs["local_files_only"] is True  # no network attempt when the hub is unreachable
        raise OSError("not in the local cache")

    monkeypatch.setattr(loading, "hub_reachable", lambda timeout_s=3.0: False)
    with pytest.raises(loading.ModelWeightsError) as info:
        loading.load_pretrained(from_pretrained, "org/model", setting="[vision] depth_model", config=RealModulesConfig())
    message = str(info.value)
    assert "cannot be reached and the model is not cached" in message
    assert "[vision] depth_model" in message and "huggingface-cli download org/model" in message


def test_cli_error_keeps_bracketed_setting_names():
    import io

    from rich.console import Console

    from vadar.cli.errors import print_error

    buffer = io.StringIO()
    print_error("set [vision] depth_model to a directory", Console(file=buffer, width=200))
    assert buffer.getvalue().strip() == "Error: set [vision] depth_model to a directory"


def test_multi_view_twins_need_the_vggt_package_and_say_how_to_install_it(monkeypatch, tmp_path):
    import importlib.util

    from base_modules.real.scene_graph import real_view_modules

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "vggt" else real_find_spec(name, *a))
    modules = real_view_modules(RealModulesConfig(device="cpu"))
    assert not modules.objects_3d.loaded  # nothing loads until a program calls it
    path = tmp_path / "f.png"
    PILImage.new("RGB", (W, H)).save(path)
    with pytest.raises(ModelWeightsError) as err:
        modules.room_layout([Image("f", str(path), W, H)])
    message = str(err.value)
    assert "vggt" in message and "pose_backend" in message and "git+https://github.com/facebookresearch/vggt" in message
    assert "\n" not in message
    with pytest.raises(ModuleError, match="pose_backend.*unknown backend 'colmap'"):
        real_view_modules(RealModulesConfig(pose_backend="colmap"))
