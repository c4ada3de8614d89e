"""ScriptedLLM and the record/replay cassettes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vadar.llm.chat import ChatModel, ChatRequest, ChatResponse, Role
from vadar.llm.doubles import ByRole, RecordingLLM, ReplayLLM, ScriptedLLM
from vadar.llm.errors import CassetteMissError, LLMError, ScriptExhaustedError
from vadar.llm.usage import UsageTracker


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "you write programs"}, {"role": "user", "content": text}]


def test_scripted_returns_in_order_and_records_prompts() -> None:
    llm = ScriptedLLM(["first answer", lambda msgs: f"saw {msgs[-1]['content']}", ChatResponse("canned", 1, 1)])
    assert isinstance(llm, ChatModel)
    assert llm.complete(ChatRequest(user("a"))).text == "first answer"
    assert llm.complete(ChatRequest(user("b"), max_tokens=5, stop=["x"])).text == "saw b"
    assert llm.complete(ChatRequest(user("c"))).text == "canned"
    assert [m[-1]["content"] for m in llm.calls] == ["a", "b", "c"]
    assert llm.requests[1]["max_tokens"] == 5 and llm.requests[1]["stop"] == ["x"]
    assert llm.remaining == 0 and llm.last_messages == user("c")


def test_by_role_answers_by_who_asks_whatever_the_prompt_says() -> None:
    script = ByRole({Role.SIGNATURE: "stubs", Role.API_IMPLEMENT: lambda msgs: f"code for {msgs[-1]['content']}"},
                    default="a program")
    llm = ScriptedLLM([script] * 4)
    assert llm.complete(ChatRequest(user("batch"), role=Role.SIGNATURE)).text == "stubs"
    assert llm.complete(ChatRequest(user("_f"), role=Role.API_IMPLEMENT)).text == "code for _f"
    assert llm.complete(ChatRequest(user("q"), role=Role.PROGRAM)).text == "a program"
    assert llm.complete(ChatRequest(user("q"))).text == "a program"  # a request that names no role
    assert llm.roles == [Role.SIGNATURE, Role.API_IMPLEMENT, Role.PROGRAM, None]
    assert llm.calls_of(Role.API_IMPLEMENT) == [user("_f")]


def test_by_role_without_a_default_refuses_a_role_it_does_not_expect() -> None:
    llm = ScriptedLLM([ByRole({Role.SIGNATURE: "stubs"})])
    with pytest.raises(AssertionError, match="no reply for role reflect"):
        llm.complete(ChatRequest(user("q"), role=Role.REFLECT))


def test_the_role_is_neither_keyed_nor_recorded(tmp_path: Path) -> None:
    plain, tagged = ChatRequest(user("q"), max_tokens=9), ChatRequest(user("q"), max_tokens=9, role=Role.PROGRAM)
    assert plain.caller_key() == tagged.caller_key() and plain == tagged
    cassette = tmp_path / "c.jsonl"
    RecordingLLM(ScriptedLLM(["answer"]), cassette).complete(tagged)
    assert '"program"' not in cassette.read_text()
    assert ReplayLLM(cassette).complete(ChatRequest(user("q"), max_tokens=9, role=Role.REFLECT)).text == "answer"


def test_scripted_snapshots_messages_against_later_mutation() -> None:
    llm = ScriptedLLM(["ok"])
    messages = user("before")
    llm.complete(ChatRequest(messages))
    messages[-1]["content"] = "after"
    assert llm.calls[0][-1]["content"] == "before"


def test_scripted_raises_scripted_exceptions_then_continues() -> None:
    llm = ScriptedLLM([LLMError("boom"), TimeoutError, "recovered"])
    with pytest.raises(LLMError, match="boom"):
        llm.complete(ChatRequest(user("a")))
    with pytest.raises(TimeoutError):
        llm.complete(ChatRequest(user("b")))
    assert llm.complete(ChatRequest(user("c"))).text == "recovered"
    assert len(llm.calls) == 3


def test_scripted_exhaustion_is_clear() -> None:
    llm = ScriptedLLM(["only one"])
    llm.complete(ChatRequest(user("a")))
    with pytest.raises(ScriptExhaustedError, match=r"call #2.*'second question'"):
        llm.complete(ChatRequest(user("second question")))


def test_scripted_token_counts_feed_usage() -> None:
    usage = UsageTracker()
    llm = ScriptedLLM(["one two three"], usage=usage, tag="coder")
    with usage.scope("q1"):
        response = llm.complete(ChatRequest([{"role": "user", "content": "four words right here"}]))
    assert (response.prompt_tokens, response.completion_tokens) == (4, 3)
    assert usage.totals("q1").total_tokens == 7 and usage.totals(tag="coder").calls == 1


def test_record_then_replay(tmp_path: Path) -> None:
    cassette = tmp_path / "cassettes" / "agent.jsonl"
    inner = ScriptedLLM(["answer A", "answer B", "answer A again"])
    recorder = RecordingLLM(inner, cassette)
    recorder.complete(ChatRequest(user("A")))
    recorder.complete(ChatRequest(user("B"), temperature=0.5))
    recorder.complete(ChatRequest(user("A")))
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert len(lines) == 3 and lines[1]["request"]["temperature"] == 0.5
    assert lines[0]["response"]["text"] == "answer A" and len(lines[0]["key"]) == 64

    replay = ReplayLLM(cassette)
    assert len(replay) == 3
    assert replay.complete(ChatRequest(user("B"), temperature=0.5)).text == "answer B"
    assert replay.complete(ChatRequest(user("A"))).text == "answer A"
    assert replay.complete(ChatRequest(user("A"))).text == "answer A again"
    assert replay.complete(ChatRequest(user("A"))).text == "answer A again"  # beyond the recording: latest repeats


def test_replay_miss_shows_the_request(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    RecordingLLM(ScriptedLLM(["x"]), cassette).complete(ChatRequest(user("recorded")))
    replay = ReplayLLM(cassette)
    with pytest.raises(CassetteMissError) as info:
        replay.complete(ChatRequest(user("something new")))
    message = str(info.value)
    assert str(cassette) in message and "something new" in message and "Re-record" in message
    with pytest.raises(CassetteMissError):
        replay.complete(ChatRequest(user("recorded"), temperature=0.9))  # sampling settings are part of the key


def test_replay_missing_or_malformed_cassette(tmp_path: Path) -> None:
    with pytest.raises(CassetteMissError, match="does not exist"):
        ReplayLLM(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "k"}\n')
    with pytest.raises(CassetteMissError, match="line 1"):
        ReplayLLM(bad)
