"""Execution-based selection: several programs per question, the plurality answer, agreement."""

from __future__ import annotations

import pytest

from vadar.programs.api_text import render_api
from vadar.agents.program import ProgramAgent
from vadar.agents.techniques.vote import VoteRecord
from vadar.agents.voting import decided, plurality, same_answer
from vadar.config import ConfigError, ReasoningConfig, VadarConfig, check_config
from vadar.llm.doubles import ScriptedLLM
from vadar.sandbox import execute

NAMESPACE = {"image": "img", "loc": lambda image, prompt: [[0.0, 0.0, 5.0, 5.0]] * 3}


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


def test_the_plurality_wins_and_numbers_within_tolerance_are_one_answer():
    vote = plurality([3, 2.0, 2.00001], [True, True, True], rel_tol=1e-3)
    assert (vote.answer, vote.winner, vote.agreeing, vote.working) == (2.0, 1, 2, 3)
    assert vote.agreement == pytest.approx(2 / 3)
    assert not same_answer(2.0, 2.1, 1e-3) and same_answer(" Yes", "yes", 0.0)
    assert not same_answer(1, "1", 1e-3) and not same_answer(True, 1, 1e-3)


def test_a_tie_goes_to_the_first_program_and_failed_programs_do_not_vote():
    assert plurality(["red", "blue"], [True, True], 1e-3).answer == "red"
    vote = plurality(["<error>", "blue", "red", "red", "blue"], [False, True, True, True, True], 1e-3)
    assert (vote.answer, vote.winner, vote.agreement) == ("blue", 1, 0.5)
    nothing = plurality(["<error>"], [False], 1e-3)
    assert nothing.winner is None and nothing.agreement == 0.0


def test_the_agent_samples_k_programs_with_their_own_seeds_and_answers_the_plurality():
    llm = ScriptedLLM(["final_result = 3", "final_result = 2.0", "final_result = 2.00001"])
    agent = ProgramAgent(llm, run, reasoning=ReasoningConfig(samples=3, sample_temperature=0.8))
    outcome = agent.solve("How far is the ball?", render_api(), NAMESPACE)
    assert outcome.answer == 2.0 and outcome.program.strip() == "final_result = 2.0" and outcome.error is None
    vote = outcome.techniques.get(VoteRecord)
    assert vote.agreement == pytest.approx(0.6667) and vote.chosen_sample == 1
    assert [s.answer for s in vote.samples] == [3, 2.0, 2.00001]
    assert outcome.attempts == 3  # every sample's reply is counted
    first, *others = llm.requests
    assert first["temperature"] is None and "seed" not in first  # the greedy program, as without sampling
    assert [(r["temperature"], r["seed"]) for r in others] == [(0.8, 1), (0.8, 2)]
    assert all(r["messages"] == first["messages"] for r in others)


def test_a_failing_first_program_loses_to_the_working_ones_and_errors_are_all_kept():
    llm = ScriptedLLM(["final_result = missing"] * 5 + ["final_result = 'yes'", "final_result = 'no'"])
    agent = ProgramAgent(llm, run, same_error_limit=5, reasoning=ReasoningConfig(samples=3))
    outcome = agent.solve("Is there a ball?", render_api(), NAMESPACE)
    vote = outcome.techniques.get(VoteRecord)
    assert outcome.answer == "yes" and vote.chosen_sample == 1
    assert vote.samples[0].error is True and len(outcome.errors) == 5


def test_samples_must_be_at_least_one():
    with pytest.raises(ConfigError, match="reasoning.samples must be between 1 and 16"):
        check_config(VadarConfig(reasoning=ReasoningConfig(samples=0)))
    assert ReasoningConfig(samples=3, formalize=True).label() == "samples=3+formalize"
    assert ReasoningConfig().label() == "none"


def test_the_vote_is_decided_once_the_programs_left_cannot_change_its_answer():
    assert decided([2, 2.0000001], [True, True], remaining=1, rel_tol=1e-3)  # 2 of 3 already agree
    assert not decided([2, 3], [True, True], remaining=1, rel_tol=1e-3)  # a third 3 would win
    assert decided(["<error>", "yes"], [False, True], remaining=1, rel_tol=1e-3)  # a later "no" only ties
    assert not decided(["<error>"], [False], remaining=2, rel_tol=1e-3)
    assert not decided(["a", "a", "b"], [True, True, True], remaining=2, rel_tol=1e-3)  # b, b: 3 to 2
    assert decided(["a", "b", "a"], [True, True, True], remaining=1, rel_tol=1e-3)  # b at best ties, later
    assert not decided(["a", "b", "b"], [True, True, True], remaining=1, rel_tol=1e-3)  # a ties b, earlier


def test_sampling_stops_when_two_programs_agree_and_the_answer_is_the_one_all_three_would_give():
    replies = ["final_result = 2", "final_result = 2.0", "final_result = 5"]
    llm = ScriptedLLM(list(replies))
    stopped = ProgramAgent(llm, run, reasoning=ReasoningConfig(samples=3))
    outcome = stopped.solve("How many balls?", render_api(), NAMESPACE)
    vote = outcome.techniques.get(VoteRecord)
    assert [s.answer for s in vote.samples] == [2, 2.0] and outcome.attempts == 2
    assert len(llm.requests) == 2 and vote.agreement == 1.0
    every = ProgramAgent(ScriptedLLM(list(replies)), run,
                         reasoning=ReasoningConfig(samples=3, vote_until_decided=False))
    full = every.solve("How many balls?", render_api(), NAMESPACE)
    every_vote = full.techniques.get(VoteRecord)
    assert [s.answer for s in every_vote.samples] == [2, 2.0, 5] and full.answer == outcome.answer == 2
