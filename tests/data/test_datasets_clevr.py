"""CLEVR adapter on the real dev data and on deliberately broken copies of a tiny layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image as PILImage

from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.types import DatasetError, Question

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
needs_clevr = pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")


@pytest.fixture(scope="module")
def clevr() -> ClevrDataset:
    return ClevrDataset(CLEVR_DIR)


@needs_clevr
def test_real_dev_split_loads(clevr: ClevrDataset) -> None:
    assert clevr.splits() == ["dev"]
    questions = clevr.questions("dev")
    assert len(questions) == 1040
    assert len({q.question_id for q in questions}) == 1040
    first = questions[0]
    assert first.question_id == "0"
    assert first.image_id == "CLEVR_train_000005"
    assert first.answer == "0" and first.answer_type == "int"
    assert first.source == "clevr" and first.split == "dev"
    assert first.gold_program and first.gold_program[0]["function"] == "scene"
    assert first.metadata["template_filename"] == "three_hop.json"
    assert first.metadata["question_family_index"] == 0
    types = {q.answer_type for q in questions}
    assert types == {"int", "str"}
    for q in questions:
        assert (q.answer_type == "int") == q.answer.lstrip("-").isdigit()


@needs_clevr
def test_real_scenes_and_images(clevr: ClevrDataset) -> None:
    questions = clevr.questions("dev")
    for q in questions:
        scene = clevr.scene(q.image_id)
        assert scene is not None and scene["image_index"] == q.metadata["image_index"]
    handle = clevr.image(questions[0])
    assert (handle.width, handle.height) == (480, 320)
    assert handle.image_id == "CLEVR_train_000005"
    assert Path(handle.path).is_file()
    assert clevr.image("CLEVR_train_000005") == handle
    assert clevr.scene("no_such_image") is None


# -- a tiny CLEVR layout that tests break one way at a time ---------------------------------


def make_layout(root: Path) -> Path:
    (root / "questions").mkdir(parents=True)
    (root / "scenes").mkdir()
    (root / "images").mkdir()
    PILImage.new("RGB", (48, 32), "gray").save(root / "images" / "IMG_000001.png")
    scene = {"image_index": 1, "image_filename": "IMG_000001.png", "objects": []}
    (root / "scenes" / "s.json").write_text(json.dumps({"info": {}, "scenes": [scene]}))
    q = {"question_index": 7, "image_index": 1, "image_filename": "IMG_000001.png",
         "question": "Are there any cubes?", "answer": "no", "program": []}
    (root / "questions" / "val.json").write_text(json.dumps({"info": {}, "questions": [q]}))
    return root


def write_questions(root: Path, questions: list[dict]) -> None:
    (root / "questions" / "val.json").write_text(json.dumps({"questions": questions}))


def base_question() -> dict:
    return {"question_index": 0, "image_index": 1, "image_filename": "IMG_000001.png",
            "question": "How many cubes?", "answer": "2"}


def test_tiny_layout_loads(tmp_path: Path) -> None:
    ds = ClevrDataset(make_layout(tmp_path))
    (q,) = ds.questions("val")
    assert isinstance(q, Question)
    assert (q.question_id, q.answer_type, q.image_id) == ("7", "str", "IMG_000001")
    assert ds.image(q).width == 48


def test_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found.*nope"):
        ClevrDataset(tmp_path / "nope")


def test_unknown_split_lists_available(tmp_path: Path) -> None:
    ds = ClevrDataset(make_layout(tmp_path))
    with pytest.raises(DatasetError, match=r"unknown split 'test'.*Available splits.*val"):
        ds.questions("test")


def test_malformed_question_json(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    (root / "questions" / "val.json").write_text('{"questions": [\n  {"question": }]}')
    with pytest.raises(DatasetError, match=r"malformed JSON in .*val\.json.*line 2, column"):
        ClevrDataset(root).questions("val")


def test_malformed_scene_json(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    (root / "scenes" / "s.json").write_text("{oops")
    with pytest.raises(DatasetError, match=r"malformed JSON in .*s\.json.*line 1, column 2"):
        ClevrDataset(root).questions("val")


def test_question_missing_field(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    bad = base_question()
    del bad["image_index"]
    write_questions(root, [base_question(), bad])
    with pytest.raises(DatasetError, match=r"question #1 is missing the required field 'image_index'"):
        ClevrDataset(root).questions("val")


def test_empty_question_text(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    write_questions(root, [dict(base_question(), question="   ")])
    with pytest.raises(DatasetError, match=r"question #0 has an empty 'question' text"):
        ClevrDataset(root).questions("val")


def test_question_without_scene(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    write_questions(root, [dict(base_question(), image_index=9, image_filename="IMG_000009.png")])
    with pytest.raises(DatasetError, match=r"image_index 9 .*no scene"):
        ClevrDataset(root).questions("val")


def test_duplicate_question_index(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    write_questions(root, [base_question(), base_question()])
    with pytest.raises(DatasetError, match=r"repeats question_index 0"):
        ClevrDataset(root).questions("val")


def test_missing_image(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    (root / "images" / "IMG_000001.png").unlink()
    ds = ClevrDataset(root)
    (q,) = ds.questions("val")  # questions load; the image is only needed for its handle
    with pytest.raises(DatasetError, match=r"image file not found: .*IMG_000001\.png"):
        ds.image(q)


def test_corrupt_image(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    path = root / "images" / "IMG_000001.png"
    path.write_bytes(path.read_bytes()[:60])
    with pytest.raises(DatasetError, match=r"corrupt or not an image: .*IMG_000001\.png"):
        ClevrDataset(root).image("IMG_000001")


def test_answer_types(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    answers = ["3", "-1", "yes", "3.5", "cube", None]
    write_questions(root, [dict(base_question(), question_index=i, answer=a)
                           for i, a in enumerate(answers)])
    got = [q.answer_type for q in ClevrDataset(root).questions("val")]
    assert got == ["int", "int", "str", "str", "str", "str"]


def test_question_id_defaults_to_position(tmp_path: Path) -> None:
    root = make_layout(tmp_path)
    q = base_question()
    del q["question_index"]
    write_questions(root, [q, dict(q)])
    assert [x.question_id for x in ClevrDataset(root).questions("val")] == ["0", "1"]


@needs_clevr
def test_gold_programs_reproduce_real_answers(clevr: ClevrDataset) -> None:
    from omni3d_bench.datasets.clevr_programs import answer

    for q in clevr.questions("dev"):
        assert answer(q.gold_program, clevr.scene(q.image_id)) == q.answer, q.question_id


def test_program_errors_name_the_step() -> None:
    from omni3d_bench.datasets.clevr_programs import ProgramError, execute

    scene = {"objects": [{"color": "red"}, {"color": "red"}], "relationships": {}}
    program = [{"function": "scene", "inputs": []},
               {"function": "filter_color", "inputs": [0], "value_inputs": ["red"]},
               {"function": "unique", "inputs": [1]}]
    with pytest.raises(ProgramError, match=r"step 2 \(unique\): expected exactly one object, got 2"):
        execute(program, scene)
