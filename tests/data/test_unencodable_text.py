"""Text that cannot be encoded (a lone surrogate) is refused with one line or becomes that
question's error; a question field that is not text is named as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llm_fake_server import FakeServer, make_client
from omni3d_bench.datasets.omni3d import Omni3DBenchDataset
from omni3d_bench.types import DatasetError, Question
from test_datasets_omni3d import make_dir, rewrite
from vadar.programs.outcome import ProgramOutcome
from vadar.cli import app
from vadar.llm.chat import ChatRequest
from vadar.llm.errors import LLMRequestError
from vadar.runs.evaluation import run_questions
from vadar.runs.results import ResultsFile
from vadar.text import invalid_unicode

UNDECODABLE = "How many \udcff\udcfe cylinders?"  # what $'\xff\xfe' becomes on a UTF-8 command line


def question(qid: str, text: str) -> Question:
    return Question(question_id=qid, image_id="i", question=text, answer=2, answer_type="int",
                    image_path="i.png", split="test", source="t")


@pytest.mark.parametrize("text", [UNDECODABLE, "cube " + chr(0xD800), chr(0xDFFF)])
def test_invalid_unicode_is_named(text: str) -> None:
    assert "lone surrogate" in invalid_unicode(text)
    assert invalid_unicode("How many cubes? \u00e9\U0001F600") is None


@pytest.mark.parametrize("text", [UNDECODABLE, "x" + chr(0xD800)])
def test_the_llm_client_refuses_it_without_sending(server: FakeServer, text: str) -> None:
    with pytest.raises(LLMRequestError, match="not valid Unicode.*cannot be sent"):
        make_client(server.base_url).complete(ChatRequest([{"role": "user", "content": text}]))
    assert server.hits == 0


@pytest.mark.parametrize("text", [UNDECODABLE, chr(0xD800)])
def test_solve_says_it_in_one_line_before_starting_anything(tmp_path: Path, text: str) -> None:
    result = CliRunner().invoke(app, ["solve", "--image", str(tmp_path / "x.png"), "--question", text],
                                env={"VADAR_HOME": str(tmp_path)})
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--question holds text that is not valid Unicode" in result.output


def test_a_question_that_cannot_be_encoded_is_that_questions_error(tmp_path: Path) -> None:
    asked: list[str] = []

    def solver(q: Question) -> ProgramOutcome:
        asked.append(q.question_id)
        return ProgramOutcome(answer=2)

    questions = [question("1", "How many?"), question("2", UNDECODABLE), question("3", "Count " + chr(0xD800))]
    results = run_questions(questions, solver, ResultsFile(tmp_path / "results.jsonl"))
    assert asked == ["1"]
    assert [r.score for r in results] == [1.0, 0.0, 0.0]
    assert results[1].error.startswith("the question holds text that is not valid Unicode")
    lines = (tmp_path / "results.jsonl").read_bytes().decode("utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)


@pytest.mark.parametrize("value, kind", [(7, "int"), (["a"], "list"), (None, "NoneType")])
def test_a_question_that_is_not_text_is_named(tmp_path: Path, value, kind: str) -> None:
    root = rewrite(make_dir(tmp_path / "d"), lambda rows: rows[0].update(question=value))
    with pytest.raises(DatasetError, match=rf"row #0 has a 'question' of type {kind}; it must be text"):
        Omni3DBenchDataset(root).questions()


def test_a_data_set_question_with_a_surrogate_loads(tmp_path: Path) -> None:
    root = rewrite(make_dir(tmp_path / "d"), lambda rows: rows[0].update(question="How many \ud800?"))
    assert invalid_unicode(Omni3DBenchDataset(root).questions()[0].question) is not None
