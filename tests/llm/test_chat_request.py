"""One `ChatRequest` for every `ChatModel`, and the reply cap the model owns.

The keys below were computed by the code before `ChatRequest` existed: the response cache and the
cassettes recorded then must keep replaying.
"""

from __future__ import annotations

import dataclasses

import pytest

from llm_fake_server import MESSAGES, FakeServer, make_client, make_config
from vadar.config import VadarConfig
from vadar.llm.chat import ChatRequest, Role, reply_limit, request_key
from vadar.llm.client import build_chat_model
from vadar.llm.doubles import RecordingLLM, ReplayLLM, ScriptedLLM
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import StepLoop, Verdict
from vadar.runs.progress import MeteredChatModel, Progress

SCHEMA = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
FULL = ChatRequest(MESSAGES, max_tokens=400, temperature=0.3, stop=["```"], seed=2, response_format=SCHEMA)


def test_the_cache_key_of_a_request_is_the_one_of_before() -> None:
    client = make_client("http://127.0.0.1:9/v1")  # never called: keys only
    assert request_key(**client.request_for(ChatRequest(MESSAGES))) == \
        "4cd50697dfcf7ea840b5e6bfedeb5c10f2093f8a34cbdf51b5f61e106b47892b"
    assert request_key(**client.request_for(FULL)) == \
        "c58ba841f476e2723772750684077fc00c3b3a1a2b795f75e60f6d7d25251b65"
    assert request_key(**client.request_for(dataclasses.replace(FULL, role=Role.SIGNATURE))) == \
        "c58ba841f476e2723772750684077fc00c3b3a1a2b795f75e60f6d7d25251b65"  # who asks is no part of it


def test_the_cassette_key_of_a_request_is_the_one_of_before() -> None:
    assert ChatRequest(MESSAGES).caller_key() == "2d3ec30c5d1ca5b707bac2c8a266dddee155df271a40529e1a3889c0d1b7e60d"
    assert FULL.caller_key() == "ae5f932ccabef0fec359abadbc7970984ab5336cfdf314d90984fd71f482bd0b"
    assert dataclasses.replace(FULL, role=Role.PROGRAM).caller_key() == FULL.caller_key()
    assert ChatRequest(MESSAGES, stop=[]).caller_key() == ChatRequest(MESSAGES).caller_key()  # no stop is no stop


def test_a_request_is_frozen_and_keeps_the_conversation_as_it_was_asked() -> None:
    conversation = [dict(m) for m in MESSAGES]
    request = ChatRequest(conversation, max_tokens=10)
    conversation.append({"role": "assistant", "content": "the loop goes on"})
    assert len(request.messages) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.max_tokens = 20  # type: ignore[misc]


@pytest.mark.parametrize(("asked", "sent"), [(400, 128), (64, 64), (None, 128)])
def test_the_client_sends_at_most_its_reply_cap(server: FakeServer, asked: int | None, sent: int) -> None:
    client = make_client(server.base_url, config=make_config(max_tokens=128))
    assert client.reply_cap == 128
    client.complete(ChatRequest(MESSAGES, max_tokens=asked))
    assert server.requests[0]["body"]["max_tokens"] == sent


def test_the_role_is_not_sent_to_the_endpoint(server: FakeServer) -> None:
    client = make_client(server.base_url)
    client.complete(ChatRequest(MESSAGES, max_tokens=64))
    client.complete(ChatRequest(MESSAGES, max_tokens=65, role=Role.API_IMPLEMENT))
    plain, tagged = (r["body"] for r in server.requests)
    assert set(tagged) == set(plain) and "api.implement" not in str(tagged)


def test_the_configured_max_tokens_is_the_wired_clients_cap_and_wrappers_pass_it_on() -> None:
    config = VadarConfig()
    config.llm.max_tokens = 300
    config.llm.cache = False
    client = build_chat_model(config, base_url="http://127.0.0.1:9/v1")
    assert client.reply_cap == 300 and MeteredChatModel(client, Progress()).reply_cap == 300
    assert reply_limit(client, 400) == 300 and reply_limit(client, 64) == 64
    assert reply_limit(ScriptedLLM([]), 400) == 400  # a double without a cap leaves the role's limit


def test_the_step_loop_asks_for_the_roles_limit_and_names_the_models_cap() -> None:
    llm = ScriptedLLM(["unfinished"], reply_cap=100)
    loop = StepLoop(llm, Sampling(max_tokens=400), max_steps=1, role=Role.PROGRAM)
    loop.run([{"role": "user", "content": "q"}], lambda reply: Verdict.accept())
    assert llm.requests[0]["max_tokens"] == 100 and "cut off at 100 tokens" in loop.cut_off_error()


def test_a_recording_keeps_the_capped_request_and_replays_it(tmp_path) -> None:
    cassette = tmp_path / "c.jsonl"
    RecordingLLM(ScriptedLLM(["answer"], reply_cap=50), cassette).complete(ChatRequest(MESSAGES, max_tokens=400))
    replay = ReplayLLM(cassette, reply_cap=50)
    assert replay.requests[0]["max_tokens"] == 50
    assert replay.complete(ChatRequest(MESSAGES, max_tokens=400)).text == "answer"
