"""Size priors in the Program agent: the prompt block only when on, the record, the reflect check,
the option from the config, the environment and the command line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from base_modules.size_priors import priors_in_text, size_prior
from vadar.programs.api_text import render_api
from vadar.agents.program import ProgramAgent
from vadar.agents.reflect import deterministic_issue
from vadar.agents.size_check import size_issue
from vadar.agents.techniques.priors import SizePriorsRecord
from vadar.agents.techniques.revise import RevisionRecord
from vadar.cli import app
from vadar.cli.options import load_settings
from vadar.config import ReasoningConfig, load_config
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.question_form import parse_question
from vadar.report.questions import technique_lines
from vadar.sandbox import execute
from scripted_jobs import answer_jobs_with

NAMESPACE = {"image": "img", "loc": lambda image, prompt: [[0.0, 0.0, 5.0, 5.0]]}
LOOK = "mug = loc(image, 'mug')[0]\n"  # a module call: the reflect step sends a program without one back
MUG = "How tall is the mug on the coffee table?"
BLOCK = ("Typical sizes (for plausibility; measure the objects in the image):\n"
         f"- {size_prior('mug').summary()}\n- {size_prior('coffee table').summary()}\n")


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


def solve(reasoning: ReasoningConfig, script: list[str], question: str = MUG):
    llm = ScriptedLLM(script)
    outcome = ProgramAgent(llm, run, reasoning=reasoning).solve(question, render_api(), NAMESPACE)
    return llm, outcome


def test_on_the_question_message_lists_the_priors_of_its_nouns_after_the_question():
    llm, outcome = solve(ReasoningConfig(size_priors=True), ["final_result = 0.1"])
    asked = llm.calls[0][-1]["content"]
    assert asked == f"Question: {MUG}\n{BLOCK}Write the program.\n"
    assert "- mug: height 0.076–0.12 m, diameter 0.075–0.09 m (" in asked
    assert "Typical sizes" not in llm.calls[0][0]["content"]  # the shared system prefix stays as it is
    assert outcome.techniques.get(SizePriorsRecord).names == ["mug", "coffee table"]
    assert technique_lines(outcome.techniques) == ["size priors shown: mug, coffee table"]


def test_off_or_without_a_known_noun_the_question_message_is_todays():
    for reasoning, question in ((ReasoningConfig(), MUG), (ReasoningConfig(size_priors=True), "How many cubes are there?")):
        llm, outcome = solve(reasoning, ["final_result = 1"], question)
        assert llm.calls[0][-1]["content"] == f"Question: {question}\nWrite the program.\n"
        assert outcome.techniques.get(SizePriorsRecord) is None


def test_with_a_task_constraint_the_priors_follow_it():
    constraint = json.dumps({"reference_frame": "world", "targets": ["mug"], "relation": "none",
                             "quantity": "height of the mug", "unit": "metres", "answer_type": "number"})
    llm, _ = solve(ReasoningConfig(formalize=True, size_priors=True), [constraint, "final_result = 0.1"])
    asked = llm.calls[1][-1]["content"]
    assert BLOCK + "Write the program.\n" in asked
    assert asked.index("- answer type: number\n") < asked.index("Never pass a relation to loc or vqa.\n") < asked.index(BLOCK)


def test_reflect_flags_a_seven_metre_mug_with_priors_on_and_revises_once():
    llm, outcome = solve(ReasoningConfig(reflect=True, size_priors=True), [LOOK + "final_result = 7.0", LOOK + "final_result = 0.1"])
    reason = ("`final_result` is 7 m, but a mug's height is typically 0.076–0.12 m (size prior: hotchickalatte.com); "
              "check that the program measured the mug and answers in metres")
    assert outcome.answer == 0.1 and outcome.techniques.get(RevisionRecord).revisions == [reason]
    assert reason in llm.calls[1][-1]["content"]


def test_reflect_without_priors_gives_the_seven_metre_mug():
    llm, outcome = solve(ReasoningConfig(reflect=True), [LOOK + "final_result = 7.0"])
    assert outcome.answer == 7.0 and outcome.techniques.get(RevisionRecord) is None and llm.remaining == 0
    assert deterministic_issue(parse_question(MUG), 7.0) is None
    assert "mug's height" in deterministic_issue(parse_question(MUG), 7.0, priors=priors_in_text(MUG))


@pytest.mark.parametrize("question, answer, flagged", [
    ("How tall is the mug?", 0.3, False),   # inside 3x the range: real mugs vary
    ("How tall is the mug?", 0.37, True),   # above 3 x 0.12 m
    ("How tall is the mug?", 0.02, True),   # below 0.076 m / 3
    ("What is the width of the sofa?", 12.0, True),
    ("How big is the refrigerator?", 1.8, False),
    ("How tall is the mug in centimeters?", 11, False),  # another unit: not checked
    ("How many times taller is the chair than the mug?", 7.0, False),
    ("How far is the mug from the chair?", 7.0, False),
    ("How tall is the mug?", "yes", False),
])
def test_only_a_metric_size_far_outside_the_prior_is_flagged(question, answer, flagged):
    assert (size_issue(parse_question(question), answer, priors_in_text(question)) is not None) == flagged


def test_the_asked_dimension_comes_from_the_question_and_falls_back_to_every_length():
    questions = ("How wide is the desk?", "What is the depth of the shelf?", "How long is the bed?",
                 "How big is the box?", "How many boxes?")
    assert [parse_question(q).asked_dimension for q in questions] == ["width", "depth", "length", "size", None]
    mug = size_prior("mug")  # no width: the span of all its lengths is the range
    assert "mug's size is typically 0.075–0.12 m" in size_issue(parse_question("How wide is the mug?"), 5.0, [mug])


def test_the_option_comes_from_the_environment_and_the_flags_and_names_the_technique(tmp_path, monkeypatch):
    assert load_config(env={"VADAR_REASONING_SIZE_PRIORS": "true"}).reasoning.size_priors is True
    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    settings = load_settings(None, (), {"reflect": True, "size_priors": True})
    assert settings.reasoning.size_priors and settings.reasoning.label() == "reflect+size_priors"
    settings = load_settings(None, ["reasoning.size_priors=true"], {"size_priors": None, "reflect": None})
    assert settings.reasoning.size_priors


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    llm = ScriptedLLM(["```python\nfinal_result = len(loc(image, 'thing'))\n```"] * 4)
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    return llm


def test_eval_records_the_option_in_the_manifest_and_the_summary(scripted, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--limit", "1", "--method", "static-api", "--size-priors",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "run.json").read_text())["reasoning"]["size_priors"] is True
    assert json.loads((out / "summary.json").read_text())["techniques"] == "size_priors"


def test_solve_with_size_priors_shows_them_to_the_program_agent(scripted):
    from omni3d_bench import sample_path

    root = sample_path()
    scenes = next((root / "scenes").glob("*.json"))
    image = root / "images" / json.loads(scenes.read_text())["scenes"][0]["image_filename"]
    question = "How tall is the chair?"
    result = CliRunner().invoke(app, ["solve", "--image", str(image), "--question", question, "--scene", str(scenes),
                                      "--size-priors"])
    assert result.exit_code == 0, result.output
    assert f"- {size_prior('chair').summary()}\n" in scripted.calls[0][-1]["content"]


def test_priors_for_the_check_only_stay_out_of_the_prompt_and_still_flag_a_seven_metre_mug():
    reasoning = ReasoningConfig(reflect=True, size_priors=True, size_priors_shown=False)
    llm, outcome = solve(reasoning, [LOOK + "final_result = 7.0", LOOK + "final_result = 0.1"])
    assert llm.calls[0][-1]["content"] == f"Question: {MUG}\nWrite the program.\n"  # as with the option off
    revision = outcome.techniques.get(RevisionRecord)
    assert outcome.answer == 0.1 and "mug's height is typically" in revision.revisions[0]
    assert outcome.techniques.get(SizePriorsRecord).check_only is True
    assert technique_lines(outcome.techniques)[0] == "size priors for the reflect check only: mug, coffee table"
    assert reasoning.label() == "reflect+size_priors=check"
    assert ReasoningConfig(size_priors=True).label() == "size_priors"
