"""`reasoning.find_order`: the objects of a question's relation chains listed after it, innermost
first; off, or for a question without a chain, the request is what it always was."""

from __future__ import annotations

from typer.testing import CliRunner

from vadar.agents.program import ProgramAgent
from vadar.agents.techniques.compose import compose, layers
from vadar.agents.techniques.find_order import FindOrderRecord
from vadar.agents.techniques.records import records_from_json
from vadar.agents.techniques.writer import PlainWriter
from vadar.config import ReasoningConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.api_text import render_api
from vadar.sandbox import execute

CHAIN = "There is a small blue metallic cylinder; how many purple rubber things are left of it?"
NAMESPACE = {"image": "img", "loc": lambda image, prompt: [[0.0, 0.0, 5.0, 5.0]]}


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


def asked(question: str, reasoning: ReasoningConfig) -> tuple[str, object]:
    llm = ScriptedLLM(["final_result = 2"])
    outcome = ProgramAgent(llm, run, reasoning=reasoning).solve(question, render_api(), NAMESPACE)
    return str(llm.calls[0][-1]["content"]), outcome


def test_the_find_order_follows_the_question_and_is_recorded():
    request, outcome = asked(CHAIN, ReasoningConfig(find_order=True))
    steps = ['1. loc(image, "small blue metallic cylinder")[0]',
             '2. the boxes of loc(image, "purple rubber things") that are left of object 1']
    assert request == (f"Question: {CHAIN}\nFind the objects in this order; loc takes the noun phrase alone, the "
                       "relations are computed in code:\n" + "\n".join(steps) + "\nWrite the program.\n")
    record = outcome.techniques.get(FindOrderRecord)
    assert record.steps == steps
    assert records_from_json(outcome.techniques.to_json()).get(FindOrderRecord).steps == record.steps


def test_off_or_without_a_chain_the_request_is_unchanged():
    plain, _ = asked(CHAIN, ReasoningConfig())
    assert plain == f"Question: {CHAIN}\nWrite the program.\n"
    request, outcome = asked("How many cylinders are there?", ReasoningConfig(find_order=True))
    assert request == "Question: How many cylinders are there?\nWrite the program.\n"
    assert outcome.techniques.get(FindOrderRecord) is None


def test_the_technique_sits_in_the_chain_only_when_on_and_names_itself():
    writer = PlainWriter(ScriptedLLM([]), run)
    assert layers(compose(ReasoningConfig(find_order=True), writer)) == ["FindOrder", "PlainWriter"]
    assert layers(compose(ReasoningConfig(), writer)) == ["PlainWriter"]
    assert ReasoningConfig(find_order=True, size_priors=True).label() == "size_priors+find_order"


def test_the_cli_flag_sets_it():
    from vadar.cli import app
    from vadar.cli.options import load_settings
    assert "--find-order" in CliRunner().invoke(app, ["eval", "--help"]).output
    assert load_settings(None, flags={"find_order": True}).reasoning.find_order
    assert not load_settings(None, flags={"find_order": None}).reasoning.find_order


def test_the_build_s_programs_take_the_find_order_and_no_other_technique():
    """Build programs judge helpers; with the find order on they are written as the evaluation's."""
    import dataclasses

    from vadar.config import VadarConfig
    from vadar.runs.methods import program_agent_for
    on = VadarConfig()
    on = dataclasses.replace(on, reasoning=dataclasses.replace(on.reasoning, find_order=True, samples=3, reflect=True))
    build = program_agent_for(on, ScriptedLLM([]), run)
    assert build.reasoning.find_order and build.reasoning.samples == 1 and not build.reasoning.reflect
    assert program_agent_for(on, ScriptedLLM([]), run, techniques=True).reasoning.samples == 3
    assert program_agent_for(VadarConfig(), ScriptedLLM([]), run).reasoning == ReasoningConfig()
