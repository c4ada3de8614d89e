"""Region masks (COCO RLE), `<mask>` tokens rewritten to typed identifiers, and the readers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from base_modules.masks import (
    MaskError,
    counts_from_string,
    counts_to_string,
    decode_rle,
    encode_rle,
    mask_box,
    mask_centroid,
)
from omni3d_bench.datasets import ClevrDataset, WarehouseDataset, detect_kind, load_dataset
from omni3d_bench.regions import question_regions, region_fields, rewrite_tokens
from omni3d_bench.sample import sample_path
from omni3d_bench.types import DatasetError

WAREHOUSE = Path(__file__).parents[1] / "fixtures" / "regions" / "warehouse"

# Vectors written by the COCO API (pycocotools 2.0.11, mask.encode / frPyObjects).
SMALL = np.zeros((6, 8), bool)
SMALL[1:4, 2:5] = True
SMALL[5, 7] = True
SMALL[0, 0] = True
SMALL_COUNTS = "01<2G000`0N"


def large_mask() -> np.ndarray:
    mask = np.zeros((120, 200), bool)
    mask[10:90, 30:170] = True
    mask[40:60, 60:80] = False
    mask[100:110, 5:195] = True
    return mask


LARGE_PREFIX = "le0:^3000000000"  # the COCO string starts so; the whole one is checked by round trip


def test_compressed_rle_decodes_to_the_known_mask() -> None:
    assert np.array_equal(decode_rle({"size": [6, 8], "counts": SMALL_COUNTS}), SMALL)
    assert encode_rle(SMALL) == {"size": [6, 8], "counts": SMALL_COUNTS}


def test_uncompressed_counts_decode_column_major() -> None:
    # column-major runs: no zero, the one at row 0 of column 0, 12 zeros down to row 1 of column 2
    runs = counts_from_string(SMALL_COUNTS)
    assert runs[:4] == [0, 1, 12, 3] and sum(runs) == 48
    assert np.array_equal(decode_rle({"size": [6, 8], "counts": runs}), SMALL)
    assert counts_from_string("0152N0") == [0, 1, 5, 3, 3, 3]  # the COCO API's string of these runs
    assert counts_to_string([0, 1, 5, 3, 3, 3]) == "0152N0"


def test_large_mask_round_trip_and_negative_deltas() -> None:
    mask = large_mask()
    rle = encode_rle(mask)
    assert rle["counts"].startswith(LARGE_PREFIX) and rle["counts"].endswith("d?")
    assert np.array_equal(decode_rle(rle), mask)
    assert np.array_equal(decode_rle({"size": rle["size"], "counts": counts_from_string(rle["counts"])}), mask)
    rng = np.random.default_rng(0)
    for _ in range(20):
        noisy = rng.random((17, 23)) < rng.random()
        assert np.array_equal(decode_rle(encode_rle(noisy)), noisy)


def test_mask_measures() -> None:
    assert mask_box(SMALL) == (0.0, 0.0, 8.0, 6.0)
    block = np.zeros((10, 10), bool)
    block[2:4, 6:10] = True
    assert mask_box(block) == (6.0, 2.0, 10.0, 4.0)
    assert mask_centroid(block) == (8.0, 3.0)
    assert mask_box(np.zeros((3, 3), bool)) is None


@pytest.mark.parametrize(("rle", "message"), [
    ({"size": [6, 8], "counts": [0, 1, 5]}, "add up to 6"),
    ({"size": [6], "counts": "0"}, "size"),
    ({"size": [6, 8], "counts": "01<2G000`0N~"}, "invalid character"),
    ({"size": [6, 8], "counts": None}, "counts"),
])
def test_bad_rle_is_a_clear_error(rle: dict, message: str) -> None:
    with pytest.raises(MaskError, match=message):
        decode_rle(rle)


@pytest.mark.parametrize(("text", "rewritten", "names"), [
    ("Is the pallet <mask> to the left of the pallet <mask>?",
     "Is the pallet <pallet_0> to the left of the pallet <pallet_1>?", ["<pallet_0>", "<pallet_1>"]),
    ("How many pallets are in the buffer region <mask>?",
     "How many pallets are in the buffer region <buffer_0>?", ["<buffer_0>"]),
    ("What is the distance between <mask> and <mask>?",
     "What is the distance between <region_0> and <region_1>?", ["<region_0>", "<region_1>"]),
    ("Is the transporter <mask> closer to the shelves <mask>, <mask> or the pallet <mask>?",
     "Is the transporter <transporter_0> closer to the shelves <shelf_0>, <shelf_1> or the pallet <pallet_0>?",
     ["<transporter_0>", "<shelf_0>", "<shelf_1>", "<pallet_0>"]),
    ("How far is the pallet <mask> from <mask>?",
     "How far is the pallet <pallet_0> from <region_0>?", ["<pallet_0>", "<region_0>"]),
])
def test_tokens_become_typed_identifiers(text: str, rewritten: str, names: list[str]) -> None:
    assert rewrite_tokens(text, len(names)) == (rewritten, names)


def test_token_counts() -> None:
    with pytest.raises(ValueError, match="2 <mask> tokens but 1 region"):
        rewrite_tokens("Is <mask> left of <mask>?", 1)
    assert rewrite_tokens("Where is the chair <mask>?", 2) == ("Where is the chair <chair_0>?",
                                                                ["<chair_0>", "<region_0>"])
    assert rewrite_tokens("How many chairs?", 0) == ("How many chairs?", [])


def test_region_records_from_box_or_mask() -> None:
    where = "q.json: question #0"
    text, regions = question_regions("Is the chair <mask> left of the table <mask>?", [
        {"box": [1, 2, 3, 4], "object_id": 5}, {"mask": encode_rle(SMALL)}], where)
    assert text == "Is the chair <chair_0> left of the table <table_0>?"
    assert [r.name for r in regions] == ["<chair_0>", "<table_0>"]
    assert regions[0].box == (1.0, 2.0, 3.0, 4.0) and regions[0].object_id == 5 and regions[0].mask_counts is None
    assert regions[1].box == (0.0, 0.0, 8.0, 6.0) and regions[1].mask_counts == SMALL_COUNTS
    with pytest.raises(DatasetError, match="question #0: the question has 2 <mask> tokens but 1"):
        question_regions("<mask> or <mask>?", [{"box": [0, 0, 1, 1]}], where)
    with pytest.raises(DatasetError, match="tokens but no regions"):
        question_regions("Is <mask> red?", None, where)
    with pytest.raises(DatasetError, match="region #0: a region box"):
        question_regions("Is <mask> red?", [{"box": [3, 0, 1, 1]}], where)
    with pytest.raises(DatasetError, match="unknown metric"):
        region_fields({"metric": "acc10"}, "How many?", where)
    assert region_fields({}, "How many?", where) == {"question": "How many?", "regions": (), "metric": None}


def test_warehouse_layout_reads_masks_and_categories() -> None:
    assert detect_kind(WAREHOUSE) == "warehouse"
    data = load_dataset(WAREHOUSE)
    assert isinstance(data, WarehouseDataset) and data.splits() == ["val"]
    questions = {q.question_id: q for q in data.questions("val")}
    lr = questions["wh-lr"]
    assert lr.question == "Is the pallet <pallet_0> to the left or the right of the pallet <pallet_1>?"
    assert (lr.answer, lr.answer_type, lr.metric) == ("left", "str", "exact")
    assert [r.name for r in lr.regions] == ["<pallet_0>", "<pallet_1>"]
    assert lr.regions[0].box == (4.0, 20.0, 16.0, 32.0)
    assert lr.regions[1].box == (44.0, 18.0, 58.0, 30.0)  # given as uncompressed counts
    assert lr.regions[1].mask_counts == encode_rle(decode_rle(
        {"size": [48, 64], "counts": lr.regions[1].mask_counts}))["counts"]
    dist, count, mcq = questions["wh-dist"], questions["wh-count"], questions["wh-mcq"]
    assert (dist.answer_type, dist.metric, dist.question) == (
        "float", "acc@10", "What is the distance between <region_0> and <region_1>?")
    assert (count.answer, count.answer_type, count.metric) == ("1", "int", "acc@10")
    assert [r.name for r in count.regions] == ["<buffer_0>"]
    assert (mcq.answer, mcq.metric, [r.name for r in mcq.regions]) == (
        "1", "exact", ["<pallet_0>", "<pallet_1>", "<pallet_2>"])
    image = data.image(lr)
    assert (image.width, image.height) == (64, 48) and data.scene(lr.image_id) is None


def test_warehouse_entry_with_more_tokens_than_masks(tmp_path: Path) -> None:
    shutil.copytree(WAREHOUSE, tmp_path / "wh")
    entries = json.loads((tmp_path / "wh" / "val.json").read_text())
    entries[0]["rle"] = entries[0]["rle"][:1]
    (tmp_path / "wh" / "val.json").write_text(json.dumps(entries))
    with pytest.raises(DatasetError, match="entry #0: the question has 2 <mask> tokens but 1 region"):
        WarehouseDataset(tmp_path / "wh").questions("val")


def test_clevr_layout_reads_optional_regions(tmp_path: Path) -> None:
    root = tmp_path / "clevr"
    shutil.copytree(sample_path(), root, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    path = root / "questions" / "sample.json"
    raw = json.loads(path.read_text())
    raw["questions"][0]["question"] = "How many cylinders are left of the cube <mask>?"
    raw["questions"][0]["regions"] = [{"box": [10, 20, 30, 40]}]
    raw["questions"][0]["metric"] = "acc@10"
    path.write_text(json.dumps(raw))
    questions = ClevrDataset(root).questions("sample")
    first, second = questions[0], questions[1]
    assert first.question == "How many cylinders are left of the cube <cube_0>?"
    assert first.regions[0].box == (10.0, 20.0, 30.0, 40.0) and first.metric == "acc@10"
    assert second.regions == () and second.metric is None
    assert second.question == raw["questions"][1]["question"]


def test_warehouse_questions_run_on_geometric_tools() -> None:
    from base_modules.module import Depth
    from base_modules.region_geometry import geometric_region_modules
    from base_modules.region_tools import bind_region_tools
    from omni3d_bench.metrics import score_answer
    from vadar.sandbox import execute

    class FlatDepth(Depth):
        def forward(self, image, bbox):
            return 4.0

    data = WarehouseDataset(WAREHOUSE)
    programs = {"wh-lr": 'final_result = "left" if is_left(image, "<pallet_0>", region(1)) else "right"',
                "wh-mcq": 'final_result = [0, 1, 2][pick_region(image, [0, 1, 2], "rightmost")]'}
    for question in data.questions("val"):
        if question.question_id not in programs:
            continue
        namespace = {"image": data.image(question),
                     **bind_region_tools(question.regions, geometric_region_modules(FlatDepth()))}
        result = execute(programs[question.question_id], namespace, timeout_s=20)
        assert result.error is None, result.error
        assert score_answer(result.value, question.answer, question.answer_type, question.metric) == 1.0


def test_box_from_runs_equals_box_of_decoded_mask() -> None:
    from base_modules.masks import rle_box, rle_counts

    rng = np.random.default_rng(3)
    masks = [SMALL, large_mask(), np.zeros((5, 4), bool), np.ones((3, 7), bool)]
    for _ in range(30):
        mask = np.zeros((int(rng.integers(1, 12)), int(rng.integers(1, 12))), bool)
        y0, x0 = rng.integers(0, mask.shape[0]), rng.integers(0, mask.shape[1])
        mask[y0:y0 + int(rng.integers(1, 6)), x0:x0 + int(rng.integers(1, 6))] = True
        mask |= rng.random(mask.shape) < 0.05
        masks.append(mask)
    for mask in masks:
        rle = encode_rle(mask)
        assert rle_box(rle["size"], rle_counts(rle)) == mask_box(mask)
