"""A reply is complete only when it ends with finish reason `stop` or `length`, streamed or plain;
anything else is retried and never cached. Every reply is cut to its character bound however it
arrives, one huge chunk included. Against a fake server on 127.0.0.1 that stops by itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_fake_server import MESSAGES, FakeServer, make_client, make_config
from vadar.llm.cache import ResponseCache
from vadar.llm.errors import LLMIncompleteError
from vadar.llm.chat import ChatRequest


@pytest.mark.parametrize("reason", ["error", "content_filter", "tool_calls", "cancelled"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
def test_a_reply_ending_otherwise_is_retried_and_not_cached(server: FakeServer, tmp_path: Path, reason: str,
                                                            stream: bool) -> None:
    server.script = [{"content": "final_result = len(loc(image, 'cube'))", "finish_reason": reason},
                     {"content": "final_result = 6"}]
    path = tmp_path / "c.sqlite"
    with make_client(server.base_url, cache=ResponseCache(path), config=make_config(stream=stream)) as client:
        assert client.complete(ChatRequest(MESSAGES)).text == "final_result = 6"
    assert server.hits == 2
    with make_client(server.base_url, cache=ResponseCache(path), config=make_config(stream=stream)) as client:
        assert client.complete(ChatRequest(MESSAGES)).text == "final_result = 6"
    assert server.hits == 2  # the complete reply was cached, the other never


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
def test_a_reply_that_always_ends_with_an_error_is_an_error(server: FakeServer, tmp_path: Path, stream: bool) -> None:
    server.script = [{"content": "final_result = 1", "finish_reason": "error"}] * 3
    client = make_client(server.base_url, cache=ResponseCache(tmp_path / "c.sqlite"),
                         config=make_config(max_retries=1, stream=stream))
    with pytest.raises(LLMIncompleteError, match="finish reason 'error'"):
        client.complete(ChatRequest(MESSAGES))
    assert server.hits == 2


@pytest.mark.parametrize("finish", ["length", "stop"])
def test_both_completions_are_kept(server: FakeServer, finish: str) -> None:
    server.script = [{"content": "final_result = 2", "finish_reason": finish}]
    reply = make_client(server.base_url, config=make_config(cache=False)).complete(ChatRequest(MESSAGES))
    assert reply.text == "final_result = 2" and reply.finish_reason == finish


@pytest.mark.parametrize("size", [100_000, 10_000_000])
def test_one_huge_chunk_is_cut_to_the_bound(server: FakeServer, tmp_path: Path, size: int) -> None:
    server.script = [{"content": "x" * size}, {"content": "final_result = 1"}]  # no space: one chunk
    path = tmp_path / "c.sqlite"
    client = make_client(server.base_url, cache=ResponseCache(path), config=make_config(stop_repeats=0))
    first = client.complete(ChatRequest(MESSAGES, max_tokens=100))
    assert first.finish_reason == "length" and len(first.text) == 16_384
    retry = [*MESSAGES, {"role": "assistant", "content": first.text}, {"role": "user", "content": "shorter"}]
    client.complete(ChatRequest(retry, max_tokens=100))
    client.accept_pending()
    assert len(json.dumps(server.requests[1]["body"])) < 20_000
    assert path.stat().st_size < 200_000


def test_chunks_past_the_bound_are_dropped_as_they_come(server: FakeServer) -> None:
    server.script = [{"content": " ".join(["y" * 5000] * 10)}]
    pieces: list[str] = []
    client = make_client(server.base_url, config=make_config(cache=False, stop_repeats=0), on_token=pieces.append)
    reply = client.complete(ChatRequest(MESSAGES, max_tokens=100))
    assert reply.finish_reason == "length" and len(reply.text) == 16_384 == sum(map(len, pieces))
