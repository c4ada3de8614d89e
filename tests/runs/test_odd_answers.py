"""Whatever a program returns is scored or becomes that question's error; the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Question
from vadar.programs.answers import normalize_answer
from vadar.programs.outcome import ProgramOutcome
from vadar.config import VadarConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.evaluation import to_result
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

ODD_VALUES = [10**400, -(10**4000), float("nan"), float("inf"), [[[10**400]]], {10**400: {1, 2}},
              {"a": [1] * 100_000}, "x" * 5_000_000, (1, (2, (3,)))]


@pytest.mark.parametrize("answer_type, gold", [("int", 3), ("float", 2.5), ("str", "yes")])
@pytest.mark.parametrize("value", ODD_VALUES, ids=range(len(ODD_VALUES)))
def test_odd_values_score_zero_without_raising(value, answer_type, gold):
    assert score_answer(normalize_answer(value), gold, answer_type) == 0.0


def test_set_and_dict_answers_become_bounded_text():
    text = normalize_answer({i * (2**61 - 1) for i in range(20_000)})
    assert isinstance(text, str) and len(text) <= 2100


def test_an_unscorable_answer_is_that_questions_error(monkeypatch: pytest.MonkeyPatch):
    question = Question(question_id="q1", image_id="i", question="How many?", answer=3, answer_type="int",
                        image_path="i.png", split="test", source="t")

    def explode(prediction, gold, answer_type, metric=None):
        if prediction == "boom":
            raise OverflowError("int too large to convert to float")
        return 1.0

    monkeypatch.setattr("vadar.runs.evaluation.score_answer", explode)
    result = to_result(question, ProgramOutcome(answer="boom"), method="vadar")
    assert result.score == 0.0 and result.answer == "<error>"
    assert result.error == "the answer could not be scored: OverflowError: int too large to convert to float"
    assert to_result(question, ProgramOutcome(answer=3), method="vadar").score == 1.0


def test_a_bad_gold_answer_still_raises():
    question = Question(question_id="q1", image_id="i", question="How many?", answer="many", answer_type="int",
                        image_path="i.png", split="test", source="t")
    with pytest.raises(ValueError, match="gold answer"):
        to_result(question, ProgramOutcome(answer=10**400), method="vadar")


def test_huge_and_odd_answers_do_not_end_an_evaluation(tmp_path: Path, run_config: VadarConfig) -> None:
    config = run_config
    config.agents.answer_kind_check = False  # one reply per question: none of these is sent back
    programs = ["final_result = 10**400", "final_result = -10**4000", "final_result = float('nan')",
                "final_result = {10**400: [10**400]}", "final_result = [[10**400]] * 3", "final_result = 2"]
    replies = [f"```python\n{code}\n```" for code in programs]
    data = DataSelection(limit=len(replies)).prepare()
    out = tmp_path / "run"
    with open_session(config, llm=ScriptedLLM(replies)) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert summary.questions == len(programs) == len(results)
    assert (out / "summary.json").exists()
    assert results[0]["answer"] == 10**400 and results[0]["error"] is None and results[0]["score"] == 0.0
    assert results[2]["answer"] == "nan" and results[2]["score"] == 0.0
    assert isinstance(results[3]["answer"], str) and results[3]["score"] == 0.0
