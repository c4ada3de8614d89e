"""Structured replies (a formalized constraint, test scenes) are parsed under a depth and a size
bound: a reply nested thousands deep is refused and asked again like any reply that is not JSON,
and the question goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vadar.programs.question_form import parse_question

from vadar.agents.formalize import Formalizer
from vadar.agents.unit_tests import TestWriter
from vadar.config import VadarConfig
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.programs.structured import MAX_JSON_CHARS, MAX_JSON_DEPTH, json_depth, json_object
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

ANY = {"type": ["object", "array"]}
DEEP = {
    "arrays": "[" * 3000,
    "closed arrays": "[" * 3000 + "]" * 3000,
    "objects": '{"a": ' * 3000 + "1" + "}" * 3000,
    "fenced": "```json\n" + "[" * 5000 + "\n```",
}
CONSTRAINT = json.dumps({"reference_frame": "camera", "targets": ["red cubes"], "relation": "none",
                         "quantity": "the number of red cubes", "unit": "none", "answer_type": "count"})
SCENES = json.dumps({"scenes": [{"objects": [{"color": "red", "size": "large", "material": "rubber",
                                              "shape": "cube", "right": 0, "behind": 0}], "answer": 1}]})


@pytest.mark.parametrize("reply", list(DEEP.values()), ids=list(DEEP))
def test_a_deeply_nested_reply_is_refused_with_a_reason(reply):
    with pytest.raises(ValueError, match=f"nested more than {MAX_JSON_DEPTH} levels deep"):
        json_object(reply, ANY)


def test_a_reply_past_the_size_bound_is_refused_unread():
    with pytest.raises(ValueError, match=f"longer than {MAX_JSON_CHARS} characters"):
        json_object("[" + "1, " * MAX_JSON_CHARS + "1]", ANY)


def test_brackets_inside_strings_do_not_count_and_shallow_replies_parse():
    text = json.dumps({"quantity": "[" * 500 + '\\"{' * 100, "targets": [["a"]]})
    assert json_depth(text) == 3
    assert json_object(text, ANY)["targets"] == [["a"]]


@pytest.mark.parametrize("reply", ["[" * 3000, '{"scenes": ' * 2000])
def test_formalize_asks_again_after_a_deep_reply(reply):
    llm = ScriptedLLM([reply, CONSTRAINT])
    formalized = Formalizer(llm).formalize(parse_question("How many red cubes are there?"))
    assert formalized.constraint is not None and formalized.constraint.answer_type == "count"
    assert "nested more than" in formalized.refused[0]
    assert "nested more than" in llm.calls[1][-1]["content"]


@pytest.mark.parametrize("reply", ["[" * 3000, "{" * 3000])
def test_the_test_writer_asks_again_after_a_deep_reply(reply):
    written = TestWriter(ScriptedLLM([reply, SCENES])).write("How many red cubes are there?")
    assert len(written.tests) == 1 and written.tests[0].answer == 1
    assert "nested more than" in written.refused[0]


@pytest.mark.parametrize("technique", ["formalize", "tests"])
def test_a_run_with_deep_structured_replies_goes_on(tmp_path: Path, run_config: VadarConfig, technique: str):
    setattr(run_config.reasoning, technique, True)

    reply = ByRole({Role.PROGRAM: "```python\nfinal_result = 2\n```"}, default="[" * 3000)

    data = DataSelection(limit=2).prepare()
    out = tmp_path / "run"
    with open_session(run_config, llm=ScriptedLLM([reply] * 12)) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert summary.questions == 2 and [row["answer"] for row in rows] == [2, 2]
    refused = rows[0]["techniques"]["formalize" if technique == "formalize" else "unit_tests"]["refused"]
    assert len(refused) == 2 and all("nested more than" in reason for reason in refused)
