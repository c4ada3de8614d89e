"""Bad input through the CLI: one clear message, a non-zero exit, nothing half-written."""

import json
import shutil
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omni3d_bench import sample_path
from vadar.cli import app

runner = CliRunner()


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    values = {"VADAR_HOME": str(tmp_path / "home"), "VADAR_LLM_MAX_RETRIES": "0"}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("VADAR_LLM_BASE_URL", raising=False)
    return values


@pytest.fixture
def data(tmp_path):
    """A writable copy of the built-in sample to break in different ways."""
    root = tmp_path / "data"
    shutil.copytree(sample_path(), root, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    return root


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def invoke(*args, **env):
    return runner.invoke(app, list(args), env=env or None)


def assert_clean_failure(result, *needles, out_dir: Path | None = None):
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.output, result.output
    if out_dir is not None:
        assert not (out_dir / "results.jsonl").exists()


def test_unknown_split(env, data, tmp_path):
    result = invoke("eval", "--data", str(data), "--split", "nope", "--out", str(tmp_path / "o"))
    assert_clean_failure(result, "nope", "sample", out_dir=tmp_path / "o")


def test_missing_data_dir(env, tmp_path):
    result = invoke("eval", "--data", str(tmp_path / "absent"), "--split", "dev")
    assert_clean_failure(result, "absent")


def test_corrupt_image_is_named_before_any_llm_work(env, data, tmp_path):
    image = sorted((data / "images").glob("*.png"))[0]
    image.write_bytes(b"not a png")
    result = invoke("eval", "--data", str(data), "--split", "sample", "--out", str(tmp_path / "o"))
    assert_clean_failure(result, image.name, out_dir=tmp_path / "o")


def test_missing_image(env, data, tmp_path):
    image = sorted((data / "images").glob("*.png"))[0]
    image.unlink()
    result = invoke("eval", "--data", str(data), "--split", "sample", "--out", str(tmp_path / "o"))
    assert_clean_failure(result, image.name, out_dir=tmp_path / "o")


def test_malformed_question_json(env, data):
    (data / "questions" / "sample.json").write_text('{"questions": [')
    assert_clean_failure(invoke("eval", "--data", str(data), "--split", "sample"), "sample.json")


def test_malformed_scene_json(env, data):
    scenes = next((data / "scenes").glob("*.json"))
    scenes.write_text("{oops")
    assert_clean_failure(invoke("eval", "--data", str(data), "--split", "sample"), scenes.name)


def test_question_whose_scene_is_missing(env, data):
    scenes_file = next((data / "scenes").glob("*.json"))
    scenes = json.loads(scenes_file.read_text())
    scenes["scenes"] = scenes["scenes"][1:]
    scenes_file.write_text(json.dumps(scenes))
    assert_clean_failure(invoke("eval", "--data", str(data), "--split", "sample"), "image_index")


def test_empty_question(env, data):
    path = data / "questions" / "sample.json"
    questions = json.loads(path.read_text())
    questions["questions"][0]["question"] = "  "
    path.write_text(json.dumps(questions))
    assert_clean_failure(invoke("eval", "--data", str(data), "--split", "sample"), "question")
    assert_clean_failure(invoke("solve", "--image", "x.png", "--question", " "), "question is empty")


def test_endpoint_that_refuses(env, tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = invoke("eval", "--limit", "1", "--out", str(tmp_path / "o"), VADAR_LLM_BASE_URL=url)
    assert_clean_failure(result, url)
    assert not (tmp_path / "o" / "results.jsonl").exists()  # nothing half-written


def test_missing_model_file(env, tmp_path):
    missing = tmp_path / "nope.gguf"
    result = invoke("eval", "--limit", "1", VADAR_EMBEDDED_MODEL_PATH=str(missing))
    assert_clean_failure(result, str(missing), "VADAR_EMBEDDED_MODEL_PATH")


def test_port_in_use(env, tmp_path):
    model = tmp_path / "fake.gguf"
    model.write_bytes(b"GGUF")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = invoke("eval", "--limit", "1", VADAR_EMBEDDED_MODEL_PATH=str(model), VADAR_EMBEDDED_PORT=str(port))
    assert_clean_failure(result, str(port), "VADAR_EMBEDDED_PORT")


def test_bad_config_value(env):
    assert_clean_failure(invoke("eval", VADAR_SANDBOX_TIMEOUT_S="soon"), "VADAR_SANDBOX_TIMEOUT_S")
