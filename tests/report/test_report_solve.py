"""`vadar solve --html FILE`: one question's page, with a scripted LLM on the built-in sample."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from omni3d_bench import sample_path
from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM
from scripted_jobs import answer_jobs_with

runner = CliRunner()


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    llm = ScriptedLLM(["```python\nboxes = loc(image, 'cylinder')\n"
                       "final_result = len(boxes) if depth(image, boxes[0]) > 0 else 0\n```"])
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    return llm


def test_solve_writes_the_question_page(scripted, tmp_path):
    root = sample_path()
    scenes_file = next((root / "scenes").glob("*.json"))
    image = root / "images" / json.loads(scenes_file.read_text())["scenes"][0]["image_filename"]
    page = tmp_path / "answer.html"
    result = runner.invoke(app, ["solve", "--image", str(image), "--question", "How many <b>cylinders</b>?",
                                 "--scene", str(scenes_file), "--html", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert "How many &lt;b&gt;cylinders&lt;/b&gt;?" in html
    assert 'src="data:image/jpeg;base64,' in html  # one file: the picture is inlined
    assert html.count('class="call"') == 2  # loc, then depth of the first box
    assert 'data-boxes="2"' in html and "answer: 2" in result.output  # the two cylinders loc found
    assert "answered" in html and "image not found" not in html
