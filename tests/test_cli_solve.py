"""`vadar solve` end to end with a scripted LLM endpoint replaced through the session."""

import json

import pytest
from typer.testing import CliRunner

from omni3d_bench import sample_path
from vadar.cli import app
from vadar.cli.options import modules_label, parse_module_overrides
from vadar.llm.doubles import ScriptedLLM
from vadar.config import ConfigError

runner = CliRunner()


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    import vadar.cli.solve as solve_module
    from vadar.runs.session import open_session as real_open_session

    llm = ScriptedLLM(["```python\nfinal_result = len(loc(image, 'cylinder'))\n```"])
    monkeypatch.setattr(solve_module, "open_session", lambda config, **kw: real_open_session(config, llm=llm, **kw))
    monkeypatch.setenv("VADAR_HOME", str(tmp_path / "home"))
    return llm


def sample_files():
    root = sample_path()
    scenes = json.loads(next((root / "scenes").glob("*.json")).read_text())["scenes"]
    image = root / "images" / scenes[0]["image_filename"]
    return image, root / "scenes" / next((root / "scenes").glob("*.json")).name


def test_solve_prints_program_calls_and_answer(scripted):
    image, scenes = sample_files()
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "How many cylinders are there?",
                                 "--scene", str(scenes)])
    assert result.exit_code == 0, result.output
    assert "loc('cylinder') ->" in result.output
    assert "answer: 2" in result.output


def test_solve_without_scene_needs_real_modules(scripted):
    image, _ = sample_files()
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "How many?"])
    assert result.exit_code == 1 and "--modules real" in result.output


def test_unknown_backend_is_a_clear_error(scripted):
    image, scenes = sample_files()
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "q", "--scene", str(scenes),
                                 "--module", "depth=nonexistent-plugin"])
    assert result.exit_code == 1 and "nonexistent-plugin" in result.output and "Traceback" not in result.output


def test_parse_module_overrides():
    assert parse_module_overrides(["depth=real", " vqa = oracle "]) == {"depth": "real", "vqa": "oracle"}
    with pytest.raises(ConfigError, match="SLOT=BACKEND"):
        parse_module_overrides(["depth"])
    with pytest.raises(ConfigError, match="unknown module 'dpeth'"):
        parse_module_overrides(["dpeth=real"])


def test_modules_label_names_only_what_differs_from_oracle():
    oracle = {"loc": "oracle", "depth": "oracle", "vqa": "oracle"}
    assert modules_label(oracle) == ""
    assert modules_label(dict.fromkeys(oracle, "real")) == "real"
    assert modules_label({**oracle, "depth": "real", "vqa": "real"}) == "depth-real+vqa-real"


def test_solve_with_samples_prints_the_agreement(scripted):
    scripted._script.extend(["final_result = len(loc(image, 'thing'))", "final_result = 2"])
    image, scenes = sample_files()
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "How many cylinders are there?",
                                 "--scene", str(scenes), "--samples", "3"])
    assert result.exit_code == 0, result.output
    assert "answer: 2" in result.output and "agreement: 2 of 3 working programs (3 sampled)" in result.output
    assert [r.get("seed") for r in scripted.requests] == [None, 1, 2]
