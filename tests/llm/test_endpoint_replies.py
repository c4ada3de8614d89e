"""Endpoint replies that end early, never end, or are huge: judged by a finish reason, bounded by
the call's deadline, size-bounded before they are parsed, cached or re-sent. All against a fake
server on 127.0.0.1 that stops by itself."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from llm_fake_server import FakeServer, MESSAGES, make_client, make_config
from vadar.llm.cache import ResponseCache
from vadar.llm.errors import LLMIncompleteError, LLMTimeoutError
from vadar.llm.chat import ChatRequest


# -- 4: a stream that stops early --------------------------------------------------------------

@pytest.mark.parametrize("close_after", [1, 3])
def test_a_stream_closed_early_is_retried_and_not_cached(server: FakeServer, tmp_path: Path, close_after: int) -> None:
    server.script = [{"content": "final_result = len(loc(image, 'cube'))", "close_after": close_after},
                     {"content": "final_result = 6"}]
    path = tmp_path / "c.sqlite"
    with make_client(server.base_url, cache=ResponseCache(path)) as client:
        reply = client.complete(ChatRequest(MESSAGES))
    assert reply.text == "final_result = 6" and server.hits == 2
    with make_client(server.base_url, cache=ResponseCache(path)) as client:
        assert client.complete(ChatRequest(MESSAGES)).text == "final_result = 6"
    assert server.hits == 2  # the whole reply was cached, the truncated one never


def test_a_stream_that_always_stops_early_is_an_error_never_cached(server: FakeServer, tmp_path: Path) -> None:
    server.script = [{"content": "final_result = 1 +", "close_after": 2}] * 4
    path = tmp_path / "c.sqlite"
    client = make_client(server.base_url, cache=ResponseCache(path), config=make_config(max_retries=1))
    with pytest.raises(LLMIncompleteError, match="no finish reason"):
        client.complete(ChatRequest(MESSAGES))
    assert server.hits == 2
    server.script = []
    again = make_client(server.base_url, cache=ResponseCache(path)).complete(ChatRequest(MESSAGES))
    assert again.text.startswith("echo:")
    assert server.hits == 3  # asked again, not replayed


# -- 5: keep-alive trickles ----------------------------------------------------------------------

@pytest.mark.parametrize("action", [{"trickle": 0.1}, {"trickle": 0.1, "empty_chunks": True},
                                    {"trickle": 0.3}], ids=["comments", "empty chunks", "slow comments"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
def test_the_total_deadline_holds_whatever_the_endpoint_sends(server: FakeServer, action: dict, stream: bool) -> None:
    server.script = [dict(action, trickle_for=20.0)] * 5
    client = make_client(server.base_url, config=make_config(timeout_s=1.0, inactivity_timeout_s=0.8,
                                                             stream=stream, cache=False))
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"took longer than 1 s in all"):
        client.complete(ChatRequest(MESSAGES))
    assert time.monotonic() - started < 2.5


# -- 6: huge plain replies -----------------------------------------------------------------------

@pytest.mark.parametrize("size", [300_000, 1_000_000])
def test_a_huge_plain_reply_is_cut_before_it_is_kept(server: FakeServer, tmp_path: Path, size: int) -> None:
    server.script = [{"content": "x" * size}]
    path = tmp_path / "c.sqlite"
    client = make_client(server.base_url, cache=ResponseCache(path), config=make_config(stream=False))
    reply = client.complete(ChatRequest(MESSAGES, max_tokens=1024))
    assert reply.finish_reason == "length" and len(reply.text) <= 32 * 1024
    assert path.stat().st_size < 200_000


def test_a_plain_reply_within_bounds_is_whole(server: FakeServer) -> None:
    server.script = [{"content": "final_result = 3"}]
    reply = make_client(server.base_url, config=make_config(stream=False)).complete(ChatRequest(MESSAGES))
    assert reply.text == "final_result = 3" and reply.finish_reason == "stop"


@pytest.mark.parametrize("size", [200_000, 2_000_000])
def test_a_huge_plain_reply_never_goes_back_whole_into_the_retry_conversation(server: FakeServer, size: int) -> None:
    server.script = [{"content": "x = 1\n" * (size // 6)}, {"content": "final_result = 1"}]
    client = make_client(server.base_url, config=make_config(stream=False, cache=False, stop_repeats=0))
    first = client.complete(ChatRequest(MESSAGES, max_tokens=1024))
    retry = [*MESSAGES, {"role": "assistant", "content": first.text}, {"role": "user", "content": "shorter"}]
    client.complete(ChatRequest(retry, max_tokens=1024))
    sent = len(json.dumps(server.requests[1]["body"]))
    assert first.finish_reason == "length" and sent < 40_000


@pytest.mark.parametrize("reply", [
    "```" + " " * 99_000,
    ("```" + "\t" * 1000 + "x") * 99,
    "```python\n" + "x = 1\n" * 16_000,
    "```\n" * 24_000,
], ids=["blanks", "tabs", "unterminated", "openings"])
def test_extract_code_is_fast_on_pathological_fences(reply: str) -> None:
    from vadar.programs.code_extract import NoCodeError, extract_code

    started = time.perf_counter()
    try:
        extract_code(reply[:100_000])
    except NoCodeError:
        pass
    assert time.perf_counter() - started < 0.5
