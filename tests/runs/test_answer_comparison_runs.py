"""A vote, a unit test or a region answer over a number no float holds (`10**400`) is that
question's answer or error; the evaluation goes on and writes every result and its summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from base_modules.types import Region
from omni3d_bench.types import Question
from vadar.config import VadarConfig
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.programs.outcome import ProgramOutcome
from vadar.runs.evaluation import to_result
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

HUGE = "10**400"


def program(code: str) -> str:
    return f"```python\nfinal_result = {code}\n```"


def run_rows(config: VadarConfig, replies: list, out: Path, questions: int) -> list[dict]:
    data = DataSelection(limit=questions).prepare()
    with open_session(config, llm=ScriptedLLM(replies)) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    assert summary.questions == questions and (out / "summary.json").is_file()
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("answers, voted", [
    ([HUGE, "1", "1"], 1), ([HUGE, HUGE, "1"], 10**400), (["1", HUGE, "10**401"], 1), ([HUGE, "2.5", "'far'"], 10**400),
], ids=["huge-1-1", "huge-huge-1", "1-huge-huger", "huge-decimal-text"])
def test_a_vote_over_a_huge_number_is_the_questions_answer(tmp_path: Path, run_config: VadarConfig, answers, voted):
    run_config.reasoning.samples, run_config.reasoning.vote_until_decided = 3, False
    run_config.agents.answer_kind_check = False  # one reply per sample: 2.5 and 'far' are voted as they stand
    replies = [program(code) for code in answers] + [program("2")] * 3
    rows = run_rows(run_config, replies, tmp_path / "run", questions=2)
    assert rows[0]["answer"] == voted and rows[0]["error"] is None
    assert [s["answer"] for s in rows[0]["techniques"]["vote"]["samples"]] == [eval(code) for code in answers]  # noqa: S307
    assert rows[1]["answer"] == 2


def _scenes(answer: str) -> str:
    thing = {"color": "red", "size": "large", "material": "rubber", "shape": "cube", "right": 0, "behind": 0}
    return '{"scenes": [{"objects": [%s], "answer": %s}]}' % (json.dumps(thing), answer)


@pytest.mark.parametrize("expected, code", [("1" + "0" * 400, "1"), ("1" + "0" * 400, HUGE), ("1", HUGE),
                                            ("1e400", HUGE)], ids=["expects-huge", "both-huge", "answers-huge", "inf"])
def test_a_unit_test_expecting_a_huge_number_is_judged(tmp_path: Path, run_config: VadarConfig, expected, code):
    run_config.reasoning.tests = True

    reply = ByRole({Role.UNIT_TESTS: _scenes(expected)}, default=program(code))

    rows = run_rows(run_config, [reply] * 8, tmp_path / "run", questions=2)
    assert all(row["error"] is None for row in rows)
    assert rows[0]["answer"] == eval(code)  # noqa: S307
    assert rows[0]["techniques"]["unit_tests"]["tests"][0]["answer"] == json.loads(expected)


def _warehouse_question() -> Question:
    regions = (Region("<pallet_0>", (0.0, 0.0, 10.0, 10.0)), Region("<pallet_1>", (20.0, 0.0, 30.0, 10.0)))
    return Question(question_id="w1", question="Which of <pallet_0> and <pallet_1> is leftmost?", answer="0",
                    answer_type="int", image_id="i", image_path=Path("i.png"), split="test", source="warehouse",
                    metric="exact", regions=regions)


@pytest.mark.parametrize("answer", [[10**400, 0, 0, 0], [0, 0, float("nan"), 10], [-(10**400), 1, 2, 3]])
def test_a_region_answer_of_huge_numbers_scores_zero(answer):
    result = to_result(_warehouse_question(), ProgramOutcome(answer=answer), method="vadar")
    assert result.score == 0.0
    assert result.error is None or result.error.startswith("the answer could not be scored")
    assert to_result(_warehouse_question(), ProgramOutcome(answer=[0, 0, 10, 10]), method="vadar").score == 1.0
