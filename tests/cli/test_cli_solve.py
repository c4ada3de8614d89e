"""`vadar solve` end to end with a scripted LLM endpoint replaced through the session."""

import json

import pytest
from typer.testing import CliRunner

from omni3d_bench import sample_path
from vadar.cli import app
from vadar.app.run_dirs import modules_label
from vadar.cli.options import load_settings
from vadar.llm.doubles import ScriptedLLM
from vadar.config import ConfigError
from scripted_jobs import answer_jobs_with

runner = CliRunner()


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    llm = ScriptedLLM(["```python\nfinal_result = len(loc(image, 'cylinder'))\n```"])
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
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
    assert result.exit_code == 2 and "--modules real" in result.output


def test_unknown_backend_is_a_clear_error(scripted):
    image, scenes = sample_files()
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "q", "--scene", str(scenes),
                                 "--module", "depth=nonexistent-plugin"])
    assert result.exit_code == 2 and "nonexistent-plugin" in result.output and "Traceback" not in result.output


def test_module_flags_are_module_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    settings = load_settings(None, (), {"module": ["depth=real", " vqa = oracle "]})
    assert settings.modules.per_module == {"depth": "real", "vqa": "oracle"}
    with pytest.raises(ConfigError, match="SLOT=BACKEND"):
        load_settings(None, (), {"module": ["depth"]})
    with pytest.raises(ConfigError, match="unknown module 'dpeth'"):
        load_settings(None, (), {"module": ["dpeth=real"]})


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


def test_solve_over_several_frames_gives_the_program_views(monkeypatch, tmp_path):
    """--video DIR (and --image repeated): the frames in order reach the program as `views`,
    and the page shows every frame."""
    import shutil

    import vadar.runs.prepare as prepare_module
    from base_modules.oracle.clevr import clevr_oracle_modules

    root = sample_path()
    scenes = json.loads(next((root / "scenes").glob("*.json")).read_text())["scenes"][:2]
    video = tmp_path / "video"
    video.mkdir()
    by_id = {}
    for k, scene in enumerate(scenes):
        frame = video / f"frame{k}.png"
        shutil.copy(root / "images" / scene["image_filename"], frame)
        by_id[f"{k:03d}_frame{k}"] = scene
    expected = sum(o["shape"] == "cylinder" for s in scenes for o in s["objects"])
    monkeypatch.setattr(prepare_module, "build_modules",
                        lambda *a, **kw: clevr_oracle_modules(by_id.get))
    # the per-frame modules over several frames; the real multi-view twins need VGGT (tested apart)
    monkeypatch.setattr(prepare_module, "view_modules", lambda *a, **kw: None)
    program = "final_result = [len(loc(v, 'cylinder')) for v in views]"
    llm = ScriptedLLM([f"```python\n{program}\n```"] * 2)
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["solve", "--video", str(video), "--question", "Count the cylinders in each frame.",
                                 "--modules", "real", "--html", str(page)])
    assert result.exit_code == 0, result.output
    counts = [sum(o["shape"] == "cylinder" for o in s["objects"]) for s in scenes]
    assert f"answer: {counts}" in result.output and sum(counts) == expected
    assert "frame 1: 001_frame1" in page.read_text()
    shown = "\n".join(str(m["content"]) for m in llm.calls[0])
    assert "`views` is the list of frames" in shown and "def objects_3d" not in shown
    images = ["--image", str(video / "frame0.png"), "--image", str(video / "frame1.png")]
    again = runner.invoke(app, ["solve", *images, "--question", "Count the cylinders in each frame.",
                                "--modules", "real"])
    assert again.exit_code == 0 and f"answer: {counts}" in again.output
    both = runner.invoke(app, ["solve", *images, "--video", str(video), "--question", "q"])
    assert both.exit_code != 0 and "not both" in both.output
