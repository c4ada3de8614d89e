"""`vadar solve` refuses inputs it cannot use in one line, before any LLM request: an image file
name that is not UTF-8, a frame that is a looping link, too many samples; an HTML page that
cannot be written is one line too, after the answer."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omni3d_bench import sample_path
from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM
from scripted_jobs import answer_jobs_with

runner = CliRunner()


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    llm = ScriptedLLM(["```python\nfinal_result = len(loc(image, 'cylinder'))\n```"] * 3)
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    return llm


@pytest.fixture
def sample(tmp_path) -> tuple[Path, Path]:
    """The sample's first image and its scene, as one scene file."""
    root = sample_path()
    scenes = json.loads(next((root / "scenes").glob("*.json")).read_text())["scenes"]
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(scenes[0]))
    return root / "images" / scenes[0]["image_filename"], scene


@pytest.mark.parametrize("name", [b"\xff.png", b"caf\xe9.png", b"\xed\xa0\x80.png"])
def test_an_image_name_that_is_not_utf8_is_refused_before_any_request(scripted, sample, tmp_path, name):
    image, scene = sample
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/" + name))
    shutil.copy(image, odd)
    result = runner.invoke(app, ["solve", "--image", str(odd), "--question", "How many cylinders are there?",
                                 "--scene", str(scene), "--html", str(tmp_path / "page.html")])
    assert result.exit_code == 2 and scripted.calls == []
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: image file name ") and line.endswith("is not valid UTF-8; rename the file")


def test_a_looping_frame_link_is_named(scripted, sample, tmp_path):
    image, _ = sample
    frames = tmp_path / "video"
    frames.mkdir()
    for k in range(2):
        shutil.copy(image, frames / f"{k}.png")
    os.symlink(frames / "b.png", frames / "a.png")
    os.symlink(frames / "a.png", frames / "b.png")
    result = runner.invoke(app, ["solve", "--video", str(frames), "--question", "How many chairs?"])
    assert result.exit_code == 2 and scripted.calls == []
    assert "'a.png' is not a readable image file (a broken or looping link?)" in result.output


@pytest.mark.parametrize("samples", ["1000", "17", "0"])
def test_samples_are_bounded(scripted, sample, samples):
    image, scene = sample
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "How many?", "--scene", str(scene),
                                 "--samples", samples])
    assert result.exit_code == 2 and "--samples" in result.output and scripted.calls == []


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_an_html_page_that_cannot_be_written_is_one_line_after_the_answer(scripted, sample, tmp_path, monkeypatch,
                                                                          code):
    def fail(path, **kwargs):
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr("vadar.report.question_page.write_question_page", fail)
    image, scene = sample
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "How many cylinders are there?",
                                 "--scene", str(scene), "--html", str(page)])
    assert result.exit_code == 1 and "answer: 2" in result.output
    assert f"Error: cannot write {page}: {os.strerror(code)}" in result.output and "Traceback" not in result.output
