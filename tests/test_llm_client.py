"""LLMClient against a scripted fake OpenAI-compatible server on 127.0.0.1 (no external network)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from vadar.config import LLMConfig, PathsConfig, VadarConfig
from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatModel
from vadar.llm.client import LLMClient, build_chat_model
from vadar.llm.chat import request_key
from vadar.llm.errors import (
    LLMBadResponseError,
    LLMEmptyResponseError,
    LLMError,
    LLMSilentError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from vadar.llm.usage import UsageTracker


class FakeServer:
    """Answers POST .../chat/completions from a script of actions, then with a default success.

    Actions: {"status": 503} (error), {"hang": True} (never answers until teardown),
    {"content": "...", "usage": {...}} (success; content may be None), {"raw": "..."} (that body
    with HTTP 200), {"no_choices": True}, {"pause_after": N, "pause_s": S} (stream N pieces, then
    go silent for S seconds), {"piece_delay_s": S} (a pause before every piece).
    Requests with `stream: true` are answered with server-sent events, one piece per word.
    """

    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with fake._lock:
                    fake.requests.append({"path": self.path, "body": body})
                    action = fake.script.pop(0) if fake.script else {}
                if action.get("hang"):
                    fake.release.wait(10)
                    return
                if "raw" in action:
                    self._send(200, action["raw"].encode(), "text/html")
                    return
                status = action.get("status", 200)
                if status == 200 and body.get("stream"):
                    self._stream(action, body)
                    return
                if status != 200:
                    payload: dict[str, Any] = {"error": {"message": f"scripted {status}", "type": "fake", "code": status}}
                else:
                    content = action.get("content", f"echo: {body['messages'][-1]['content']}")
                    payload = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": action.get("finish_reason", "stop")}
                        ],
                        "usage": action.get("usage", {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}),
                    }
                self._send(status, json.dumps(payload).encode(), "application/json")

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, action: dict[str, Any], body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                content = action.get("content", f"echo: {body['messages'][-1]['content']}")
                words = [] if content is None else [w + " " for w in content.split(" ")]
                if words:
                    words[-1] = words[-1][:-1]
                base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                        "model": body.get("model", "fake")}
                events = [] if action.get("no_choices") else [
                    {**base, "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]}
                    for w in words
                ] + [{**base, "choices": [{"index": 0, "delta": {}, "finish_reason": action.get("finish_reason", "stop")}]}]
                usage = action.get("usage", {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16})
                events.append({**base, "choices": [], "usage": usage})
                try:
                    for index, event in enumerate(events):
                        if index == action.get("pause_after"):
                            fake.release.wait(action.get("pause_s", 10))
                        time.sleep(action.get("piece_delay_s", 0))
                        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def hits(self) -> int:
        return len(self.requests)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    fake.thread.start()
    yield fake
    fake.release.set()
    fake.httpd.shutdown()
    fake.httpd.server_close()


def make_config(**overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {"model": "test-model", "timeout_s": 5.0, "max_retries": 3, "cache": True, "seed": 7}
    values.update(overrides)
    return LLMConfig(**values)


def make_client(base_url: str, **kwargs: Any) -> LLMClient:
    config = kwargs.pop("config", None) or make_config()
    return LLMClient(config, base_url=base_url, retry_wait_s=0.01, retry_wait_max_s=0.05, **kwargs)


MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "how far?"}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_success_returns_text_tokens_and_sends_config(server: FakeServer) -> None:
    server.script = [{"content": "3 meters", "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22, "prompt_tokens_details": {"cached_tokens": 16}}}]
    usage = UsageTracker()
    client = make_client(server.base_url, usage=usage, tag="coder")
    assert isinstance(client, ChatModel)
    response = client.complete(MESSAGES, stop=["```"])
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
    response = client.complete(MESSAGES, max_tokens=50, temperature=0.7)
    assert response.cached_prompt_tokens is None and response.prompt_tokens == 11
    body = server.requests[0]["body"]
    assert "seed" not in body and "stop" not in body
    assert body["max_tokens"] == 50 and body["temperature"] == 0.7


@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_errors_are_retried_then_succeed(server: FakeServer, status: int) -> None:
    server.script = [{"status": status}, {"status": status}, {"content": "ok"}]
    assert make_client(server.base_url).complete(MESSAGES).text == "ok"
    assert server.hits == 3


def test_retry_exhaustion_raises_unavailable_naming_base_url(server: FakeServer) -> None:
    server.script = [{"status": 503}] * 10
    client = make_client(server.base_url, config=make_config(max_retries=2))
    with pytest.raises(LLMUnavailableError) as info:
        client.complete(MESSAGES)
    assert server.hits == 3
    message = str(info.value)
    assert server.base_url in message and "503" in message and "VADAR_LLM_BASE_URL" in message


def test_connection_refused_fails_fast_with_fix_instructions() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    client = make_client(base_url, config=make_config(max_retries=2))
    start = time.perf_counter()
    with pytest.raises(LLMUnavailableError) as info:
        client.complete(MESSAGES)
    assert time.perf_counter() - start < 3.0
    message = str(info.value)
    assert base_url in message and "Start the server" in message and "embedded" in message


def test_silent_endpoint_is_retried_then_reported(server: FakeServer) -> None:
    server.script = [{"hang": True}, {"hang": True}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=0.3, max_retries=1))
    started = time.monotonic()
    with pytest.raises(LLMSilentError, match=r"sent nothing for 0.3 s \(VADAR_LLM_INACTIVITY_TIMEOUT_S\)"):
        client.complete(MESSAGES)
    assert server.hits == 2 and time.monotonic() - started < 2.0


def test_silence_then_success(server: FakeServer) -> None:
    server.script = [{"hang": True}, {"content": "late but fine"}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=0.3, max_retries=1))
    assert client.complete(MESSAGES).text == "late but fine"


def test_silence_in_the_middle_of_a_stream_is_noticed(server: FakeServer) -> None:
    server.script = [{"content": "one two three", "pause_after": 2}, {"content": "whole answer"}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=0.3, max_retries=1))
    assert client.complete(MESSAGES).text == "whole answer" and server.hits == 2


def test_total_bound_stops_a_slow_trickle(server: FakeServer) -> None:
    words = " ".join(["word"] * 100)
    server.script = [{"content": words, "piece_delay_s": 0.05}]
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=1.0, timeout_s=0.5))
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"took longer than 0.5 s in all \(VADAR_LLM_TIMEOUT_S\); \d+ characters"):
        client.complete(MESSAGES)
    assert time.monotonic() - started < 1.5 and server.hits == 1


def test_tokens_reach_the_callback_as_they_stream(server: FakeServer) -> None:
    server.script = [{"content": "three point five meters"}]
    pieces: list[str] = []
    client = make_client(server.base_url, on_token=pieces.append)
    assert client.complete(MESSAGES).text == "three point five meters"
    assert pieces == ["three ", "point ", "five ", "meters"]


def test_non_json_body_with_status_200_is_retried_then_reported(server: FakeServer) -> None:
    server.script = [{"raw": "<html>proxy error</html>"}, {"raw": "<html>proxy error</html>"}]
    client = make_client(server.base_url, config=make_config(max_retries=1))
    with pytest.raises(LLMBadResponseError, match="not a chat completion|without any completion chunks"):
        client.complete(MESSAGES)
    assert server.hits == 2


@pytest.mark.parametrize("stream", [True, False])
def test_non_json_body_then_success(server: FakeServer, stream: bool) -> None:
    server.script = [{"raw": "not json at all"}, {"content": "fine"}]
    client = make_client(server.base_url, config=make_config(max_retries=1, stream=stream))
    assert client.complete(MESSAGES).text == "fine"


def test_reply_without_choices_is_named(server: FakeServer) -> None:
    server.script = [{"no_choices": True}]
    with pytest.raises(LLMEmptyResponseError, match="returned a completion with no choices"):
        make_client(server.base_url).complete(MESSAGES)


def test_runaway_reply_is_cut_off_not_kept_whole(server: FakeServer) -> None:
    server.script = [{"content": " ".join(["spam"] * 20_000)}]
    reply = make_client(server.base_url).complete(MESSAGES, max_tokens=100)
    assert reply.finish_reason == "length" and len(reply.text) < 17_000


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(server: FakeServer, status: int) -> None:
    server.script = [{"status": status}]
    with pytest.raises(LLMError) as info:
        make_client(server.base_url).complete(MESSAGES)
    assert not isinstance(info.value, LLMUnavailableError)
    assert server.hits == 1
    message = str(info.value)
    assert server.base_url in message and "test-model" in message and str(status) in message


@pytest.mark.parametrize("content", [None, ""])
def test_empty_content_is_a_clear_error(server: FakeServer, content: str | None) -> None:
    server.script = [{"content": content, "finish_reason": "length"}]
    with pytest.raises(LLMEmptyResponseError, match="empty content.*max_tokens"):
        make_client(server.base_url).complete(MESSAGES)


def test_no_base_url_is_a_clear_error() -> None:
    with pytest.raises(LLMUnavailableError, match="VADAR_LLM_BASE_URL"):
        LLMClient(make_config(base_url=None))


# -- caching through the client ----------------------------------------------------------------------


def test_identical_call_is_served_from_cache(server: FakeServer, tmp_path: Path) -> None:
    usage = UsageTracker()
    client = make_client(server.base_url, cache=ResponseCache(tmp_path / "c.sqlite"), usage=usage)
    first = client.complete(MESSAGES)
    second = client.complete([dict(m) for m in MESSAGES])
    assert server.hits == 1
    assert second.text == first.text and second.from_cache and not first.from_cache
    assert second.latency_s == 0.0 and second.prompt_tokens == first.prompt_tokens == 11
    totals = usage.totals()
    assert (totals.calls, totals.cache_hits, totals.prompt_tokens, totals.fresh_prompt_tokens) == (2, 1, 22, 11)


def test_cache_persists_across_clients(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with make_client(server.base_url, cache=ResponseCache(path)) as client:
        client.complete(MESSAGES)
    again = make_client(server.base_url, cache=ResponseCache(path)).complete(MESSAGES)
    assert again.from_cache and server.hits == 1


def test_reply_before_an_abort_is_asked_again_not_replayed(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    other = [{"role": "user", "content": "and then?"}]
    server.script = [{"content": "first"}, {"content": "crashes the caller"}]
    with pytest.raises(RuntimeError):
        with make_client(server.base_url, cache=ResponseCache(path)) as client:
            client.complete(MESSAGES)
            client.complete(other)  # the caller went on after the first reply: it is accepted
            raise RuntimeError("the run aborted after the second reply")
    cache = ResponseCache(path)
    assert cache.state(request_key(**client.request_for(MESSAGES))) == "accepted"
    assert cache.state(request_key(**client.request_for(other))) is None
    server.script = [{"content": "asked again"}]
    rerun = make_client(server.base_url, cache=cache)
    assert rerun.complete(MESSAGES).from_cache
    assert rerun.complete(other).text == "asked again" and server.hits == 3


def test_reply_of_a_killed_process_stays_pending(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    client = make_client(server.base_url, cache=ResponseCache(path))
    client.complete(MESSAGES)  # no next call, no clean exit: as if killed here
    assert ResponseCache(path).state(request_key(**client.request_for(MESSAGES))) == "pending"
    assert not make_client(server.base_url, cache=ResponseCache(path)).complete(MESSAGES).from_cache


def test_cache_disabled_by_config_or_absent(server: FakeServer, tmp_path: Path) -> None:
    off = make_client(server.base_url, config=make_config(cache=False), cache=ResponseCache(tmp_path / "c.sqlite"))
    off.complete(MESSAGES)
    off.complete(MESSAGES)
    none = make_client(server.base_url, cache=None)
    none.complete(MESSAGES)
    none.complete(MESSAGES)
    assert server.hits == 4


@pytest.mark.parametrize(
    "kwargs", [{"temperature": 0.5}, {"max_tokens": 10}, {"stop": ["\n"]}]
)
def test_different_sampling_params_miss_the_cache(server: FakeServer, tmp_path: Path, kwargs: dict[str, Any]) -> None:
    client = make_client(server.base_url, cache=ResponseCache(tmp_path / "c.sqlite"))
    client.complete(MESSAGES)
    assert not client.complete(MESSAGES, **kwargs).from_cache
    assert server.hits == 2


def test_different_seed_or_model_misses_the_cache(server: FakeServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    make_client(server.base_url, cache=cache).complete(MESSAGES)
    make_client(server.base_url, cache=cache, config=make_config(seed=8)).complete(MESSAGES)
    make_client(server.base_url, cache=cache, config=make_config(model="other")).complete(MESSAGES)
    assert server.hits == 3 and len(cache) == 3


def test_failed_calls_are_not_cached(server: FakeServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    server.script = [{"status": 400}]
    client = make_client(server.base_url, cache=cache)
    with pytest.raises(LLMError):
        client.complete(MESSAGES)
    assert len(cache) == 0
    assert client.complete(MESSAGES).text.startswith("echo")


# -- accounting ----------------------------------------------------------------------------------------


def test_scopes_and_tags_total_per_question(server: FakeServer) -> None:
    usage = UsageTracker()
    client = make_client(server.base_url, usage=usage)
    with usage.scope("question-1"):
        client.tagged("signature").complete(MESSAGES)
        client.tagged("program").complete(MESSAGES)
    with usage.scope("question-2"):
        client.tagged("program").complete(MESSAGES)
    client.complete(MESSAGES)
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
                client.complete(MESSAGES)

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
    client.complete(MESSAGES)
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
        assert session.llm.complete(MESSAGES).text == "three point five meters"
    assert progress.tokens == 4


LOOPING = "".join(f"x = depth(image, objects[{i}])\n" for i in range(200))


def test_a_looping_reply_is_stopped_early_and_counted_by_the_tokens_that_came():
    fake = FakeServer()
    fake.thread.start()
    try:
        fake.script = [{"content": LOOPING}]
        reply = make_client(fake.base_url).complete(MESSAGES, max_tokens=400)
        assert reply.finish_reason == "repetition"
        assert reply.text == "x = depth(image, objects[0])\n"  # the copies are dropped
        # the stream was left before its usage chunk: the pieces that came are the count (the fake
        # sends a word a piece: 3 words per line, the third line's last word carrying "\nx ")
        assert reply.completion_tokens == 10
        fake.script = [{"content": LOOPING}]
        whole = make_client(fake.base_url, config=make_config(stop_repeats=0, cache=False)).complete(MESSAGES)
        assert whole.finish_reason == "stop" and whole.text == LOOPING and whole.completion_tokens == 5
    finally:
        fake.release.set()
        fake.httpd.shutdown()
        fake.httpd.server_close()


def test_a_plain_completion_that_loops_is_marked_the_same_way(server: FakeServer) -> None:
    server.script = [{"content": LOOPING}]
    reply = make_client(server.base_url, config=make_config(stream=False)).complete(MESSAGES)
    assert reply.finish_reason == "repetition" and reply.text.count("\n") == 1


def test_a_looping_reply_replayed_from_the_cache_is_cut_the_same_way(server: FakeServer, tmp_path: Path) -> None:
    server.script = [{"content": LOOPING, "finish_reason": "length"}]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with make_client(server.base_url, cache=cache, config=make_config(stop_repeats=0)) as old:
        assert old.complete(MESSAGES).finish_reason == "length"  # recorded whole, as before the guard
    replayed = make_client(server.base_url, cache=cache).complete(MESSAGES)
    assert replayed.from_cache and server.hits == 1
    assert replayed.finish_reason == "repetition" and replayed.text == "x = depth(image, objects[0])\n"


def test_a_stream_whose_last_unended_line_completes_a_loop_is_cut_too(server: FakeServer) -> None:
    server.script = [{"content": "".join(f"x = depth(image, objects[{i}])\n" for i in range(3)).rstrip("\n")}]
    reply = make_client(server.base_url).complete(MESSAGES)
    assert reply.finish_reason == "repetition" and reply.text == "x = depth(image, objects[0])\n"
