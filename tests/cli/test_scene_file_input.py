"""A `--scene` that is a directory, not UTF-8 or not JSON is one line from the loader the command line
and the Python API share (`omni3d_bench.datasets.single.load_scene_file`), before any LLM request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omni3d_bench import sample_path
from omni3d_bench.datasets.single import single_question_dataset
from omni3d_bench.datasets.tables import load_json, read_jsonl
from omni3d_bench.types import DatasetError
from scripted_jobs import answer_jobs_with
from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM


@pytest.fixture
def image() -> Path:
    root = sample_path()
    scenes = json.loads(next((root / "scenes").glob("*.json")).read_text())["scenes"]
    return root / "images" / scenes[0]["image_filename"]


def _bad_scenes(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes('{"objects": [], "note": "café"}'.encode("latin-1"))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    folder = tmp_path / "scenes_dir"
    folder.mkdir()
    return {"directory": (folder, "is a directory"), "latin-1": (latin1, "is not UTF-8 text (byte 0xe9"),
            "deep": (deep, "is not valid JSON")}


@pytest.mark.parametrize("case", ["directory", "latin-1", "deep"])
def test_the_loader_refuses_a_bad_scene_in_one_line(tmp_path, image, case):
    path, message = _bad_scenes(tmp_path)[case]
    with pytest.raises(DatasetError) as info:
        single_question_dataset(image, "How many cubes?", path)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("case", ["directory", "latin-1"])
def test_solve_says_it_in_one_line_before_any_request(monkeypatch, tmp_path, image, case):
    llm = ScriptedLLM(["```python\nfinal_result = 1\n```"])
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    path, message = _bad_scenes(tmp_path)[case]
    result = CliRunner().invoke(app, ["solve", "--image", str(image), "--question", "How many cubes?",
                                      "--scene", str(path)])
    assert result.exit_code != 0 and llm.calls == [] and "Traceback" not in result.output
    [line] = result.output.strip().splitlines()
    assert message in line


def test_every_json_table_reader_says_not_utf8_in_one_line(tmp_path):
    table = tmp_path / "questions.json"
    table.write_bytes(b'[{"question": "caf\xe9"}]')
    rows = tmp_path / "questions.jsonl"
    rows.write_bytes(b'{"question": "caf\xe9"}\n')
    for read, path in ((load_json, table), (read_jsonl, rows)):
        with pytest.raises(DatasetError, match=r"is not UTF-8 text \(byte 0xe9 at offset"):
            read(path)
