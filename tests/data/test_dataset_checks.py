"""Every loader checks its data set once, up front, and refuses it in one line naming the file,
the question and the problem: ids used twice, gold answers not of the declared type, masks of
another size than their image, unknown categories, region records that cannot be read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image as PILImage

from omni3d_bench import sample_path
from omni3d_bench.datasets import BenchDataset, ClevrDataset, Omni3DBenchDataset, WarehouseDataset
from omni3d_bench.types import DatasetError

WAREHOUSE = Path(__file__).parents[1] / "fixtures" / "regions" / "warehouse"


def _bench(root: Path, questions: list[dict]) -> Path:
    (root / "questions").mkdir(parents=True)
    (root / "images").mkdir()
    PILImage.new("RGB", (64, 48)).save(root / "images" / "i0.png")
    (root / "benchmark.json").write_text(json.dumps({"format": "vadar-bench"}))
    base = {"question": "How many chairs?", "answer": "2", "answer_type": "int", "image_id": "i0",
            "image_filename": "i0.png"}
    (root / "questions" / "test.json").write_text(json.dumps({"questions": [{**base, **q} for q in questions]}))
    return root


@pytest.mark.parametrize("questions, message", [
    ([{"question_id": 3}, {"question_id": "3", "answer": "yes", "answer_type": "str"}],
     "question '3' (#1) repeats the id of question #0; ids must be unique"),
    ([{"question_id": "a"}, {"question_id": "b"}, {"question_id": "a"}], "question 'a' (#2) repeats the id"),
    ([{"question_id": "q1"}, {"question_id": "q2", "answer": "far", "answer_type": "float"}],
     "question 'q2' (#1): its gold answer 'far' is not a number, as its answer type float needs"),
    ([{"question_id": "q1", "answer": "2.5"}], "its gold answer '2.5' is not a whole number"),
    ([{"question_id": "q1", "answer": "many"}], "its gold answer 'many' is not a number, as its answer type int"),
    ([{"question_id": "q1", "answer": "near", "answer_type": "str", "metric": "acc@10"}],
     "its gold answer 'near' is not a number, as its metric acc@10 needs"),
    ([{"question_id": "q1", "answer": "nan", "answer_type": "float"}], "its gold answer 'nan' is not a number"),
])
def test_the_generated_benchmark_loader_refuses_a_bad_data_set(tmp_path, questions, message):
    data = BenchDataset(_bench(tmp_path / "bench", questions))
    with pytest.raises(DatasetError, match="test.json: ") as caught:
        data.questions("test")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_good_gold_answers_of_every_type_load(tmp_path):
    data = BenchDataset(_bench(tmp_path / "bench", [
        {"question_id": "a"}, {"question_id": "b", "answer": "2.5", "answer_type": "float"},
        {"question_id": "c", "answer": "yes", "answer_type": "str"},
        {"question_id": "d", "answer": "left", "answer_type": "str", "metric": "exact"}]))
    assert [q.question_id for q in data.questions("test")] == ["a", "b", "c", "d"]


def _warehouse(tmp_path: Path, change) -> WarehouseDataset:
    root = tmp_path / "wh"
    shutil.copytree(WAREHOUSE, root)
    entries = json.loads((root / "val.json").read_text())
    change(entries)
    (root / "val.json").write_text(json.dumps(entries))
    return WarehouseDataset(root)


def _mask(height: int, width: int) -> dict:
    return {"size": [height, width], "counts": [height * width - 1, 1]}


WAREHOUSE_BREAKS = {
    "duplicate id": (lambda e: e[1].update(id=e[0]["id"]), "repeats the id of question #0"),
    "category as a list": (lambda e: e[0].update(category=["mcq"]), "has category ['mcq']; expected one of"),
    "unknown category": (lambda e: e[0].update(category="height"), "has category 'height'"),
    "object_id not a number": (lambda e: e[0]["rle"][0].update(object_id="x"), "'object_id' must be an integer"),
    "mask of another size": (lambda e: e[0]["rle"].__setitem__(0, _mask(32, 48)),
                             "its region masks have different sizes"),
    "all masks of another size": (lambda e: e[0].update(rle=[_mask(32, 48), _mask(32, 48)]),
                                  "is 48x32 pixels but the image 000001.png is 64x48"),
    "a huge mask": (lambda e: e[0]["rle"].__setitem__(0, {"size": [10000, 10000], "counts": [10**8]}),
                    "10000 x 10000 pixels is larger than"),
    "a distance that is no number": (lambda e: next(x for x in e if x["category"] == "distance").update(
        normalized_answer="far"), "its gold answer 'far' is not a number, as its metric acc@10 needs"),
    "RLE with a non-ASCII character": (lambda e: e[0]["rle"][0].update(counts="d6<é"), "not ASCII"),
    "an endless RLE run": (lambda e: e[0]["rle"][0].update(counts="o" * 400_000), "a run longer than 7 characters"),
}


@pytest.mark.parametrize("kind", list(WAREHOUSE_BREAKS))
def test_the_warehouse_loader_refuses_a_bad_data_set(tmp_path, kind):
    change, message = WAREHOUSE_BREAKS[kind]
    data = _warehouse(tmp_path, change)
    with pytest.raises(DatasetError) as caught:
        data.questions("val")
    assert "val.json" in str(caught.value) and message in str(caught.value), str(caught.value)


def test_the_clevr_loader_checks_region_masks_against_the_image(tmp_path):
    root = tmp_path / "clevr"
    shutil.copytree(sample_path(), root, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    path = root / "questions" / "sample.json"
    raw = json.loads(path.read_text())
    raw["questions"][0]["question"] = "How many cylinders are left of the cube <mask>?"
    raw["questions"][0]["regions"] = [{"mask": _mask(32, 48)}]
    path.write_text(json.dumps(raw))
    with pytest.raises(DatasetError, match=r"the mask of <cube_0> is 48x32 pixels but the image .* is 480x320"):
        ClevrDataset(root).questions("sample")


def test_the_omni3d_loader_refuses_a_gold_that_is_not_of_its_type(tmp_path):
    (tmp_path / "images").mkdir()
    rows = [{"question_index": 0, "question": "How far?", "answer": "far", "answer_type": "float", "image": "a.png"}]
    (tmp_path / "annotations.json").write_text(json.dumps(rows))
    with pytest.raises(DatasetError, match="question '0' \\(#0\\): its gold answer 'far' is not a number"):
        Omni3DBenchDataset(tmp_path).questions()


@pytest.mark.parametrize("filename", ["\udcff.png", "a\ud800b.png"])
def test_an_image_name_that_is_not_utf8_is_refused_at_load(tmp_path, filename):
    data = BenchDataset(_bench(tmp_path / "bench", [{"question_id": "q1"}, {"question_id": "q2",
                                                                            "image_filename": filename}]))
    with pytest.raises(DatasetError, match=r"question 'q2' \(#1\): image file name .* is not valid UTF-8"):
        data.questions("test")
