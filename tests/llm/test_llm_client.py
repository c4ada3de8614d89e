"""LLMClient against a scripted fake OpenAI-compatible server on 127.0.0.1 (no external network)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from vadar.config import PathsConfig, VadarConfig
from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatModel, ChatRequest
from vadar.llm.client import LLMClient, build_chat_model
from vadar.llm.errors import (
    LLMBadResponseError,
    LLMEmptyResponseError,
    LLMError,
    LLMSilentError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from vadar.llm.usage import UsageTracker


from llm_fake_server import FakeServer, MESSAGES, free_port, make_client, make_config


def test_success_returns_text_tokens_and_sends_config(server: FakeServer) -> None:
    server.script = [{"content": "3 meters", "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22, "prompt_tokens_details": {"cached_tokens": 16}}}]
    usage = UsageTracker()
    client = make_client(server.base_url, usage=usage, tag="coder")
    assert isinstance(client, ChatModel)
    response = client.complete(ChatRequest(MESSAGES, stop=["```"]))
    assert response.text == "3 meters"
    assert (response.prompt_tokens, response.completion_tokens, response.cached_prompt_tokens) == (20, 2, 16)
    assert response.from_cache is False and response.finish_reason == "stop" and response.model == "test-model"
    assert response.latency_s > 0
    body = server.requests[0]["body"]
    assert server.requests[0]["path"].endswith("/v1/chat/completions")
    assert body["messages"] == MESSAGES and body["seed"] == 7 and body["stop"] == ["```"]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 1024
    totals = usage.totals()
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens, totals.cached_prompt_tokens) == (1, 20, 2, 16)
    assert usage.records[0].tag == "coder"


def test_missing_usage_details_give_none_cached_tokens_and_no_seed_when_unset(server: FakeServer) -> None:
    client = make_client(server.base_url, config=make_config(seed=None))
    response = client.complete(ChatRequest(MESSAGES, max_tokens=50, temperature=0.7))
    assert response.cached_prompt_tokens is None and response.prompt_tokens == 11
    body = server.requests[0]["body"]
    assert "seed" not in body and "stop" not in body
    assert body["max_tokens"] == 50 and body["temperature"] == 0.7


@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_errors_are_retried_then_succeed(server: FakeServer, status: int) -> None:
    server.script = [{"status": status}, {"status": status}, {"content": "ok"}]
    assert make_client(server.base_url).complete(ChatRequest(MESSAGES)).text == "ok"
    assert server.hits == 3


def test_retry_exhaustion_raises_unavailable_naming_base_url(server: FakeServer) -> None:
    server.script = [{"status": 503}] * 10
    client = make_client(server.base_url, config=make_config(max_retries=2))
    with pytest.raises(LLMUnavailableError) as info:
        client.complete(ChatRequest(MESSAGES))
    assert server.hits == 3
    message = str(info.value)
    assert server.base_url in message and "503" in message and "VADAR_LLM_BASE_URL" in message


def test_connection_refused_fails_fast_with_fix_instructions() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    client = make_client(base_url, config=make_config(max_retries=2))
    start = time.perf_counter()
    with pytest.raises(LLMUnavailableError) as info:
        client.complete(ChatRequest(MESSAGES))
    assert time.perf_counter() - start < 3.0
    message = str(info.value)
    assert base_url in message and "Start the server" in message and "embedded" in message


def test_silent_endpoint_is_retried_then_reported(server: FakeServer) -> None:
    server.script = [{"hang": True}, {"hang": True}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=0.3, max_retries=1))
    started = time.monotonic()
    with pytest.raises(LLMSilentError, match=r"sent nothing for 0.3 s \(VADAR_LLM_INACTIVITY_TIMEOUT_S\)"):
        client.complete(ChatRequest(MESSAGES))
    assert server.hits == 2 and time.monotonic() - started < 2.0


def test_silence_then_success(server: FakeServer) -> None:
    server.script = [{"hang": True}, {"content": "late but fine"}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=0.3, max_retries=1))
    assert client.complete(ChatRequest(MESSAGES)).text == "late but fine"


def test_silence_in_the_middle_of_a_stream_is_noticed(server: FakeServer) -> None:
    server.script = [{"content": "one two three", "pause_after": 2}, {"content": "whole answer"}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=0.3, max_retries=1))
    assert client.complete(ChatRequest(MESSAGES)).text == "whole answer" and server.hits == 2


def test_total_bound_stops_a_slow_trickle(server: FakeServer) -> None:
    words = " ".join(["word"] * 100)
    server.script = [{"content": words, "piece_delay_s": 0.05}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=1.0, timeout_s=0.5))
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"took longer than 0.5 s in all \(VADAR_LLM_TIMEOUT_S\); \d+ characters"):
        client.complete(ChatRequest(MESSAGES))
    assert time.monotonic() - started < 1.5 and server.hits == 1


def test_tokens_reach_the_callback_as_they_stream(server: FakeServer) -> None:
    server.script = [{"content": "three point five meters"}]
    pieces: list[str] = []
    client = make_client(server.base_url, on_token=pieces.append)
    assert client.complete(ChatRequest(MESSAGES)).text == "three point five meters"
    assert pieces == ["three ", "point ", "five ", "meters"]


def test_non_json_body_with_status_200_is_retried_then_reported(server: FakeServer) -> None:
    server.script = [{"raw": "<html>proxy error</html>"}, {"raw": "<html>proxy error</html>"}]
    client = make_client(server.base_url, config=make_config(max_retries=1))
    with pytest.raises(LLMBadResponseError, match="not a chat completion|without any completion chunks"):
        client.complete(ChatRequest(MESSAGES))
    assert server.hits == 2


@pytest.mark.parametrize("stream", [True, False])
def test_non_json_body_then_success(server: FakeServer, stream: bool) -> None:
    server.script = [{"raw": "not json at all"}, {"content": "fine"}]
    client = make_client(server.base_url, config=make_config(max_retries=1, stream=stream))
    assert client.complete(ChatRequest(MESSAGES)).text == "fine"


def test_reply_without_choices_is_named(server: FakeServer) -> None:
    server.script = [{"no_choices": True}]
    with pytest.raises(LLMEmptyResponseError, match="returned a completion with no choices"):
        make_client(server.base_url).complete(ChatRequest(MESSAGES))


def test_runaway_reply_is_cut_off_not_kept_whole(server: FakeServer) -> None:
    server.script = [{"content": " ".join(["spam"] * 20_000)}]
    reply = make_client(server.base_url).complete(ChatRequest(MESSAGES, max_tokens=100))
    assert reply.finish_reason == "length" and len(reply.text) < 17_000


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(server: FakeServer, status: int) -> None:
    server.script = [{"status": status}]
    with pytest.raises(LLMError) as info:
        make_client(server.base_url).complete(ChatRequest(MESSAGES))
    assert not isinstance(info.value, LLMUnavailableError)
    assert server.hits == 1
    message = str(info.value)
    assert server.base_url in message and "test-model" in message and str(status) in message


@pytest.mark.parametrize("content", [None, ""])
def test_empty_content_is_a_clear_error(server: FakeServer, content: str | None) -> None:
    server.script = [{"content": content, "finish_reason": "length"}]
    with pytest.raises(LLMEmptyResponseError, match="empty content.*max_tokens"):
        make_client(server.base_url).complete(ChatRequest(MESSAGES))


def test_no_base_url_is_a_clear_error() -> None:
    with pytest.raises(LLMUnavailableError, match="VADAR_LLM_BASE_URL"):
        LLMClient(make_config(base_url=None))


# -- accounting ----------------------------------------------------------------------------------------


def test_scopes_and_tags_total_per_question(server: FakeServer) -> None:
    usage = UsageTracker()
    client = make_client(server.base_url, usage=usage)
    with usage.scope("question-1"):
        client.tagged("signature").complete(ChatRequest(MESSAGES))
        client.tagged("program").complete(ChatRequest(MESSAGES))
    with usage.scope("question-2"):
        client.tagged("program").complete(ChatRequest(MESSAGES))
    client.complete(ChatRequest(MESSAGES))
    assert usage.totals("question-1").calls == 2 and usage.totals("question-1").prompt_tokens == 22
    assert usage.totals("question-2").calls == 1
    assert usage.totals().calls == 4 and usage.totals().completion_tokens == 20
    assert usage.totals(tag="program").calls == 2 and usage.totals(tag=None).calls == 1
    summary = usage.summary()
    assert summary["total"]["total_tokens"] == 64
    assert set(summary["scopes"]) == {"question-1", "question-2"}
    assert summary["tags"]["program"]["calls"] == 2 and summary["tags"]["None"]["calls"] == 1
    assert client.tag is None


def test_scopes_are_separate_per_thread(server: FakeServer) -> None:
    usage = UsageTracker()
    client = make_client(server.base_url, usage=usage)

    def answer(name: str, calls: int) -> None:
        with usage.scope(name):
            for _ in range(calls):
                client.complete(ChatRequest(MESSAGES))

    threads = [threading.Thread(target=answer, args=(f"q{i}", i + 1)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [usage.totals(f"q{i}").calls for i in range(3)] == [1, 2, 3]
    assert usage.totals().calls == 6


# -- factory -------------------------------------------------------------------------------------------


def test_build_chat_model_wires_cache_from_paths(server: FakeServer, tmp_path: Path) -> None:
    config = VadarConfig(llm=make_config(), paths=PathsConfig(home=tmp_path))
    usage = UsageTracker()
    client = build_chat_model(config, base_url=server.base_url, usage=usage)
    assert client.cache is not None and client.cache.path == tmp_path / "llm_cache.sqlite"
    assert client.usage is usage and client.base_url == server.base_url
    client.complete(ChatRequest(MESSAGES))
    assert (tmp_path / "llm_cache.sqlite").is_file()

    config.llm.cache = False
    assert build_chat_model(config, base_url=server.base_url).cache is None


def test_a_session_shows_streamed_tokens_on_its_progress(server: FakeServer, tmp_path: Path) -> None:
    from vadar.config import VadarConfig
    from vadar.runs.progress import Progress
    from vadar.runs.session import open_session

    class Counting(Progress):
        def __init__(self) -> None:
            self.tokens = 0

        def on_token(self, n_tokens: int = 1) -> None:
            self.tokens += n_tokens

    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.llm.base_url = server.base_url
    server.script = [{"content": "three point five meters"}]
    progress = Counting()
    with open_session(config, progress=progress) as session:
        assert session.llm.complete(ChatRequest(MESSAGES)).text == "three point five meters"
    assert progress.tokens == 4


LOOPING = "".join(f"x = depth(image, objects[{i}])\n" for i in range(200))


def test_a_looping_reply_is_stopped_early_and_counted_by_the_tokens_that_came():
    fake = FakeServer()
    fake.thread.start()
    try:
        fake.script = [{"content": LOOPING}]
        reply = make_client(fake.base_url).complete(ChatRequest(MESSAGES, max_tokens=400))
        assert reply.finish_reason == "repetition"
        assert reply.text == "x = depth(image, objects[0])\n"  # the copies are dropped
        # the stream was left before its usage chunk: the pieces that came are the count (the fake
        # sends a word a piece: 3 words per line; copies that differ in a number must come 6 times,
        # and the sixth line's last word carries "\nx ")
        assert reply.completion_tokens == 19
        fake.script = [{"content": LOOPING}]
        plain = make_client(fake.base_url, config=make_config(stop_repeats=0, cache=False))
        whole = plain.complete(ChatRequest(MESSAGES))
        assert whole.finish_reason == "stop" and whole.text == LOOPING and whole.completion_tokens == 5
    finally:
        fake.release.set()
        fake.httpd.shutdown()
        fake.httpd.server_close()


def test_a_plain_completion_that_loops_is_marked_the_same_way(server: FakeServer) -> None:
    server.script = [{"content": LOOPING}]
    reply = make_client(server.base_url, config=make_config(stream=False)).complete(ChatRequest(MESSAGES))
    assert reply.finish_reason == "repetition" and reply.text.count("\n") == 1


def test_a_looping_reply_replayed_from_the_cache_is_cut_the_same_way(server: FakeServer, tmp_path: Path) -> None:
    server.script = [{"content": LOOPING, "finish_reason": "length"}]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with make_client(server.base_url, cache=cache, config=make_config(stop_repeats=0)) as old:
        assert old.complete(ChatRequest(MESSAGES)).finish_reason == "length"  # recorded whole, as before the guard
    replayed = make_client(server.base_url, cache=cache).complete(ChatRequest(MESSAGES))
    assert replayed.from_cache and server.hits == 1
    assert replayed.finish_reason == "repetition" and replayed.text == "x = depth(image, objects[0])\n"


def test_a_stream_whose_last_unended_line_completes_a_loop_is_cut_too(server: FakeServer) -> None:
    server.script = [{"content": "".join(f"x = depth(image, objects[{i}])\n" for i in range(6)).rstrip("\n")}]
    reply = make_client(server.base_url).complete(ChatRequest(MESSAGES))
    assert reply.finish_reason == "repetition" and reply.text == "x = depth(image, objects[0])\n"


def test_a_seed_and_a_response_format_reach_the_endpoint_and_the_cache_key_only_when_set(server: FakeServer) -> None:
    client = make_client(server.base_url)
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    client.complete(ChatRequest(MESSAGES, seed=3, response_format=schema))
    body = server.requests[0]["body"]
    assert body["seed"] == 3 and body["response_format"] == schema
    plain = client.request_for(ChatRequest(MESSAGES))
    assert "response_format" not in plain and plain["seed"] == 7
    assert client.request_for(ChatRequest(MESSAGES, seed=None, response_format=None)) == plain
