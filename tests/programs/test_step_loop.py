"""The one agent step loop: requests, accounting, cut-off replies, feedback and stopping."""

from __future__ import annotations

import dataclasses

import pytest

from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import LLMCost, Reply, StepLoop, Verdict
from vadar.llm.chat import ChatResponse, Role
from vadar.llm.doubles import ScriptedLLM


def reply(text: str, finish: str = "stop", prompt: int = 10, completion: int = 3, cached: int = 4) -> ChatResponse:
    return ChatResponse(text=text, prompt_tokens=prompt, completion_tokens=completion,
                        cached_prompt_tokens=cached, finish_reason=finish)


def test_feedback_goes_back_until_the_judge_accepts_and_cost_adds_up():
    llm = ScriptedLLM([reply("bad"), reply("still bad"), reply("good")])
    seen: list[Reply] = []

    def judge(r: Reply) -> Verdict:
        seen.append(r)
        return Verdict.accept() if r.text == "good" else Verdict.retry(f"fix {r.attempt}")

    messages = [{"role": "user", "content": "task"}]
    cost = LLMCost()
    end = StepLoop(llm, Sampling(max_tokens=50), max_steps=5, role=Role.PROGRAM).run(messages, judge, cost)
    assert end.done and end.steps == 3
    assert [r.attempt for r in seen] == [1, 2, 3]
    assert [m["content"] for m in messages] == ["task", "bad", "fix 1", "still bad", "fix 2", "good"]
    assert (cost.replies, cost.prompt_tokens, cost.completion_tokens, cost.cached_prompt_tokens) == (3, 30, 9, 12)


def test_retries_sample_warmer_and_every_request_carries_the_role_limit():
    llm = ScriptedLLM([reply("a"), reply("b"), reply("c")])
    StepLoop(llm, Sampling(max_tokens=77), max_steps=3, role=Role.PROGRAM).run([], lambda r: Verdict.retry("again"))
    assert [r["temperature"] for r in llm.requests] == [None, 0.3, 0.6]
    assert {r["max_tokens"] for r in llm.requests} == {77}


def test_turns_without_retry_temperature_keep_the_configured_one():
    llm = ScriptedLLM([reply("a"), reply("b")])
    StepLoop(llm, Sampling(max_tokens=9, retry_temperature_step=0.0), max_steps=2, role=Role.PROGRAM).run(
        [], lambda r: Verdict.retry("go on"))
    assert [r["temperature"] for r in llm.requests] == [None, None]


def test_the_models_reply_cap_caps_the_role_limit():
    llm = ScriptedLLM([reply("a")], reply_cap=128)
    loop = StepLoop(llm, Sampling(max_tokens=400), max_steps=1, role=Role.PROGRAM)
    loop.run([], lambda r: Verdict.accept())
    assert llm.requests[0]["max_tokens"] == 128 and "cut off at 128 tokens" in loop.cut_off_error()


def test_a_cut_off_reply_is_flagged_with_the_message_for_the_llm():
    llm = ScriptedLLM([reply("x = [1, 1, 1, 1", finish="length")])
    seen: list[Reply] = []
    loop = StepLoop(llm, Sampling(max_tokens=20), max_steps=1, role=Role.PROGRAM)
    loop.run([], lambda r: seen.append(r) or Verdict.accept())
    assert seen[0].cut_off and "cut off at 20 tokens" in seen[0].cut_off_error


def test_give_up_stops_at_once_and_running_out_is_not_done():
    llm = ScriptedLLM([reply("a"), reply("b")])
    end = StepLoop(llm, Sampling(max_tokens=5), max_steps=5, role=Role.PROGRAM).run([], lambda r: Verdict.give_up())
    assert not end.done and end.steps == 1 and llm.remaining == 1
    end = StepLoop(llm, Sampling(max_tokens=5), max_steps=1, role=Role.PROGRAM).run([], lambda r: Verdict.retry("no"))
    assert not end.done and end.steps == 1


def test_on_step_announces_each_attempt_before_the_request():
    llm = ScriptedLLM([reply("a"), reply("b")])
    announced: list[tuple[int, int]] = []
    StepLoop(llm, Sampling(max_tokens=5), max_steps=2, role=Role.PROGRAM).run(
        [], lambda r: Verdict.retry("again"), on_step=lambda a: announced.append((a, len(llm.calls))))
    assert announced == [(1, 0), (2, 1)]


def test_at_least_one_step():
    with pytest.raises(ValueError, match="at least 1"):
        StepLoop(ScriptedLLM([]), Sampling(max_tokens=5), max_steps=0, role=Role.PROGRAM)


def test_a_reply_stopped_for_repeating_itself_is_cut_off_and_the_llm_told_which_line():
    text = "x = objects[0]\nx = objects[1]\nx = objects[2]\n"
    llm = ScriptedLLM([reply(text, finish="repetition")])
    seen: list[Reply] = []
    loop = StepLoop(llm, Sampling(max_tokens=20), max_steps=1, role=Role.PROGRAM)
    loop.run([], lambda r: seen.append(r) or Verdict.accept())
    assert seen[0].cut_off
    assert "kept repeating the same lines (such as `x = objects[2]`)" in seen[0].cut_off_error


def test_every_request_says_which_role_asks_and_a_sampled_loop_keeps_it():
    llm = ScriptedLLM([reply("a"), reply("b"), reply("c")])
    loop = StepLoop(llm, Sampling(max_tokens=5), max_steps=2, role=Role.API_IMPLEMENT)
    loop.run([], lambda r: Verdict.retry("again"))
    dataclasses.replace(loop, seed=1, max_steps=1).run([], lambda r: Verdict.accept())
    assert llm.roles == [Role.API_IMPLEMENT] * 3 and len(llm.calls_of(Role.API_IMPLEMENT)) == 3


PREFILL = '```python\ndef _f(x: int) -> int:\n    """Twice x."""\n'


def test_a_prefill_ends_every_request_and_its_continuation_is_judged_whole():
    llm = ScriptedLLM([reply("    return x\n```"), reply(PREFILL + "    return 2 * x\n```")])
    seen: list[str] = []
    messages = [{"role": "user", "content": "implement _f"}]
    loop = StepLoop(llm, Sampling(max_tokens=50), max_steps=3, role=Role.API_IMPLEMENT, prefill=PREFILL)
    end = loop.run(messages, lambda r: seen.append(r.text) or (Verdict.accept() if "2 * x" in r.text
                                                                 else Verdict.retry("wrong")))
    assert end.done
    # an endpoint that returns only the continuation gets the prefill added; one that returns both is read as is
    assert seen == [PREFILL + "    return x\n```", PREFILL + "    return 2 * x\n```"]
    assert all(r["messages"][-1] == {"role": "assistant", "content": PREFILL} for r in llm.requests)
    # the conversation keeps whole replies, never the prefill as a turn of its own
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


def test_a_whole_reply_from_an_endpoint_that_does_not_continue_is_used_as_it_is():
    from vadar.programs.step_loop import continued

    assert continued(PREFILL, "```python\ndef _f(x): return 2 * x\n```") == "```python\ndef _f(x): return 2 * x\n```"
    assert continued(PREFILL, "def _f(x):\n    return 2 * x") == "def _f(x):\n    return 2 * x"
    # a body's nested def and a bare closing fence (an empty body) are continuations
    assert continued(PREFILL, "    def g():\n        return x\n    return g()\n```").startswith(PREFILL)
    assert continued(PREFILL, "```") == PREFILL + "```"
