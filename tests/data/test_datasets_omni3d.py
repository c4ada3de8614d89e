"""Omni3D-Bench adapter on fixtures built here in its layouts: directory, JSONL, Parquet, zip."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

import pytest
from PIL import Image as PILImage

from omni3d_bench.datasets import Omni3DBenchDataset, detect_kind, load_dataset
from omni3d_bench.types import DatasetError

SIZES = {"41069.1_00000012.jpg": (64, 48), "41069.1_00000040.jpg": (40, 30), "7.png": (20, 10)}
ROWS = [
    {"image_index": "41069.1_00000012.jpg", "question_index": 0,
     "question": "How many chairs are there?", "answer": 3, "answer_type": "int"},
    {"image_index": "41069.1_00000012.jpg", "question_index": 1,
     "question": "How tall is the table in meters?", "answer": 0.75, "answer_type": "float"},
    {"image_index": "41069.1_00000040.jpg", "question_index": 2,
     "question": "Is the lamp left of the sofa?", "answer": "yes", "answer_type": "str"},
    {"image_index": "7.png", "question_index": 3,
     "question": "How many times wider is the bed than the nightstand?", "answer": 2.5,
     "answer_type": "float"},
]


def image_bytes(name: str) -> bytes:
    buf = io.BytesIO()
    fmt = "JPEG" if name.endswith(".jpg") else "PNG"
    PILImage.new("RGB", SIZES[name], (120, 30, 200)).save(buf, format=fmt)
    return buf.getvalue()


def make_dir(root: Path, table: str = "annotations.json") -> Path:
    (root / "images").mkdir(parents=True)
    for name in SIZES:
        (root / "images" / name).write_bytes(image_bytes(name))
    rows = [dict(r, image_filename=r["image_index"]) for r in ROWS]
    if table.endswith(".jsonl"):
        (root / table).write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    else:
        (root / table).write_text(json.dumps({"questions": rows}))
    return root


def make_parquet(path: Path) -> Path:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"image_index": r["image_index"],
             "image": {"bytes": image_bytes(r["image_index"]), "path": r["image_index"]},
             "q_index": r["question_index"], "question": r["question"],
             "answer": str(r["answer"]), "answer_type": r["answer_type"]} for r in ROWS]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def zip_tree(src: Path, archive: Path, prefix: str) -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for file in sorted(src.rglob("*")):
            if file.is_file():
                zf.write(file, f"{prefix}{file.relative_to(src).as_posix()}")
    return archive


def check(ds: Omni3DBenchDataset) -> None:
    qs = ds.questions("test")
    assert [q.question_id for q in qs] == ["0", "1", "2", "3"]
    assert [q.answer for q in qs] == ["3", "0.75", "yes", "2.5"]
    assert [q.answer_type for q in qs] == ["int", "float", "str", "float"]
    assert [q.image_id for q in qs] == ["41069.1_00000012", "41069.1_00000012",
                                       "41069.1_00000040", "7"]
    assert all(q.source == "omni3d_bench" and q.gold_program is None for q in qs)
    assert qs[0].image_path == qs[1].image_path
    handle = ds.image(qs[0])
    assert (handle.width, handle.height) == (64, 48)
    assert Path(handle.path).is_file()
    assert ds.image("7").width == 20
    assert ds.scene("7") is None
    assert ds.splits() == ["test"]


def test_directory_layout(tmp_path: Path) -> None:
    check(Omni3DBenchDataset(make_dir(tmp_path / "d"), cache_dir=tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()  # files on disk need no cache


def test_jsonl_layout(tmp_path: Path) -> None:
    check(Omni3DBenchDataset(make_dir(tmp_path / "d", "rows.jsonl"), cache_dir=tmp_path / "c"))


def test_parquet_extracts_images_once(tmp_path: Path) -> None:
    table = make_parquet(tmp_path / "hf" / "data" / "train-00000-of-00001.parquet")
    cache = tmp_path / "cache"
    ds = Omni3DBenchDataset(table, cache_dir=cache)
    check(ds)
    images = sorted((cache / "images").iterdir())
    assert len(images) == 3  # one file per distinct image, shared by its questions
    assert {p.suffix for p in images} == {".jpg", ".png"}
    mtimes = [p.stat().st_mtime_ns for p in images]
    check(Omni3DBenchDataset(table, cache_dir=cache))
    assert [p.stat().st_mtime_ns for p in sorted((cache / "images").iterdir())] == mtimes
    # the HF repository layout (parquet under data/) is found from its root too
    check(load_dataset(tmp_path / "hf", cache_dir=cache))


def test_zip_of_directory(tmp_path: Path) -> None:
    archive = zip_tree(make_dir(tmp_path / "d"), tmp_path / "omni3d-bench.zip", "omni3d-bench/")
    cache = tmp_path / "cache"
    check(Omni3DBenchDataset(archive, cache_dir=cache))
    assert len(list((cache / "unpacked").iterdir())) == 1
    check(load_dataset(archive, cache_dir=cache))  # reuses the unpacked copy
    assert len(list((cache / "unpacked").iterdir())) == 1


def test_zip_of_parquet(tmp_path: Path) -> None:
    make_parquet(tmp_path / "p" / "bench.parquet")
    archive = zip_tree(tmp_path / "p", tmp_path / "bench.zip", "")
    check(Omni3DBenchDataset(archive, cache_dir=tmp_path / "cache"))


def test_parquet_without_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "x.parquet"
    table.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DatasetError, match="needs the optional package pyarrow: pip install pyarrow"):
        Omni3DBenchDataset(table, cache_dir=tmp_path / "c").questions()


def test_scenes_alongside(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "d")
    scene = {"image_index": "7.png", "objects": [{"category": "bed"}]}
    (root / "scenes.json").write_text(json.dumps({"scenes": [scene]}))
    ds = Omni3DBenchDataset(root)
    assert ds.scene("7") == scene
    assert ds.scene("41069.1_00000012") is None


def rewrite(root: Path, change) -> Path:
    data = json.loads((root / "annotations.json").read_text())
    change(data["questions"])
    (root / "annotations.json").write_text(json.dumps(data))
    return root


@pytest.mark.parametrize(("change", "message"), [
    (lambda rows: rows[2].update(answer_type="bool"),
     r"row #2 has answer_type 'bool'; expected one of int, float, str"),
    (lambda rows: rows[1].pop("answer"), r"row #1 is missing the required field 'answer'"),
    (lambda rows: rows[0].update(question=""), r"row #0 has an empty 'question' text"),
    (lambda rows: rows[3].update(question_index=0), r"row #3 repeats question id 0"),
    (lambda rows: [r.pop(k) for r in rows for k in ("image_index", "image_filename")],
     r"row #0 names no image"),
])
def test_bad_rows(tmp_path: Path, change, message: str) -> None:
    root = rewrite(make_dir(tmp_path / "d"), change)
    with pytest.raises(DatasetError, match=message):
        Omni3DBenchDataset(root).questions()


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="Omni3D-Bench data not found"):
        Omni3DBenchDataset(tmp_path / "missing")
    root = make_dir(tmp_path / "d")
    with pytest.raises(DatasetError, match=r"unknown split 'dev'.*available: test"):
        Omni3DBenchDataset(root).questions("dev")
    (root / "annotations.json").write_text('{"questions": [}')
    with pytest.raises(DatasetError, match=r"malformed JSON in .*annotations\.json.*line 1"):
        Omni3DBenchDataset(root).questions()
    bad_zip = tmp_path / "bad.zip"
    bad_zip.write_bytes(b"not a zip")
    with pytest.raises(DatasetError, match=r"bad\.zip is not a valid zip"):
        Omni3DBenchDataset(bad_zip, cache_dir=tmp_path / "c").questions()
    empty = tmp_path / "empty"
    (empty / "images").mkdir(parents=True)
    with pytest.raises(DatasetError, match="no question table"):
        Omni3DBenchDataset(empty).questions()


def test_missing_image_named_on_request(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "d")
    (root / "images" / "7.png").unlink()
    ds = Omni3DBenchDataset(root)
    with pytest.raises(DatasetError, match=r"image file not found: .*images/7\.png"):
        ds.image(ds.questions()[3])


def test_detection(tmp_path: Path) -> None:
    clevr = tmp_path / "clevr"
    (clevr / "questions").mkdir(parents=True)
    (clevr / "questions" / "val.json").write_text('{"questions": []}')
    assert detect_kind(clevr) == "clevr"
    assert detect_kind(make_dir(tmp_path / "o")) == "omni3d"
    assert detect_kind(tmp_path / "o" / "annotations.json") == "omni3d"
    neither = tmp_path / "neither"
    (neither / "images").mkdir(parents=True)
    with pytest.raises(DatasetError, match=r"cannot tell the layout of .*neither.*kind='clevr'"):
        load_dataset(neither)
    with pytest.raises(DatasetError, match="unknown data set kind 'coco'"):
        load_dataset(neither, kind="coco")
    with pytest.raises(DatasetError, match="data set path not found"):
        load_dataset(tmp_path / "nowhere")
    assert isinstance(load_dataset(tmp_path / "o", kind="omni3d-bench"), Omni3DBenchDataset)
