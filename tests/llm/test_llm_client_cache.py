"""The response cache seen through LLMClient: hits, misses, aborted and failed calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatRequest, request_key
from vadar.llm.errors import (
    LLMError,
)
from vadar.llm.usage import UsageTracker


from llm_fake_server import FakeServer, MESSAGES, make_client, make_config


# -- caching through the client ----------------------------------------------------------------------


def test_identical_call_is_served_from_cache(server: FakeServer, tmp_path: Path) -> None:
    usage = UsageTracker()
    client = make_client(server.base_url, cache=ResponseCache(tmp_path / "c.sqlite"), usage=usage)
    first = client.complete(ChatRequest(MESSAGES))
    second = client.complete(ChatRequest([dict(m) for m in MESSAGES]))
    assert server.hits == 1
    assert second.text == first.text and second.from_cache and not first.from_cache
    assert second.latency_s == 0.0 and second.prompt_tokens == first.prompt_tokens == 11
    totals = usage.totals()
    assert (totals.calls, totals.cache_hits, totals.prompt_tokens, totals.fresh_prompt_tokens) == (2, 1, 22, 11)


def test_cache_persists_across_clients(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with make_client(server.base_url, cache=ResponseCache(path)) as client:
        client.complete(ChatRequest(MESSAGES))
    again = make_client(server.base_url, cache=ResponseCache(path)).complete(ChatRequest(MESSAGES))
    assert again.from_cache and server.hits == 1


def test_reply_before_an_abort_is_asked_again_not_replayed(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    other = [{"role": "user", "content": "and then?"}]
    server.script = [{"content": "first"}, {"content": "crashes the caller"}]
    with pytest.raises(RuntimeError):
        with make_client(server.base_url, cache=ResponseCache(path)) as client:
            client.complete(ChatRequest(MESSAGES))
            client.complete(ChatRequest(other))  # the caller went on after the first reply: it is accepted
            raise RuntimeError("the run aborted after the second reply")
    cache = ResponseCache(path)
    assert cache.state(request_key(**client.request_for(ChatRequest(MESSAGES)))) == "accepted"
    assert cache.state(request_key(**client.request_for(ChatRequest(other)))) is None
    server.script = [{"content": "asked again"}]
    rerun = make_client(server.base_url, cache=cache)
    assert rerun.complete(ChatRequest(MESSAGES)).from_cache
    assert rerun.complete(ChatRequest(other)).text == "asked again" and server.hits == 3


def test_reply_of_a_killed_process_stays_pending(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    client = make_client(server.base_url, cache=ResponseCache(path))
    client.complete(ChatRequest(MESSAGES))  # no next call, no clean exit: as if killed here
    assert ResponseCache(path).state(request_key(**client.request_for(ChatRequest(MESSAGES)))) == "pending"
    assert not make_client(server.base_url, cache=ResponseCache(path)).complete(ChatRequest(MESSAGES)).from_cache


def test_cache_disabled_by_config_or_absent(server: FakeServer, tmp_path: Path) -> None:
    off = make_client(server.base_url, config=make_config(cache=False), cache=ResponseCache(tmp_path / "c.sqlite"))
    off.complete(ChatRequest(MESSAGES))
    off.complete(ChatRequest(MESSAGES))
    none = make_client(server.base_url, cache=None)
    none.complete(ChatRequest(MESSAGES))
    none.complete(ChatRequest(MESSAGES))
    assert server.hits == 4


@pytest.mark.parametrize(
    "kwargs", [{"temperature": 0.5}, {"max_tokens": 10}, {"stop": ["\n"]}]
)
def test_different_sampling_params_miss_the_cache(server: FakeServer, tmp_path: Path, kwargs: dict[str, Any]) -> None:
    client = make_client(server.base_url, cache=ResponseCache(tmp_path / "c.sqlite"))
    client.complete(ChatRequest(MESSAGES))
    assert not client.complete(ChatRequest(MESSAGES, **kwargs)).from_cache
    assert server.hits == 2


def test_different_seed_or_model_misses_the_cache(server: FakeServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    make_client(server.base_url, cache=cache).complete(ChatRequest(MESSAGES))
    make_client(server.base_url, cache=cache, config=make_config(seed=8)).complete(ChatRequest(MESSAGES))
    make_client(server.base_url, cache=cache, config=make_config(model="other")).complete(ChatRequest(MESSAGES))
    assert server.hits == 3 and len(cache) == 3


def test_failed_calls_are_not_cached(server: FakeServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    server.script = [{"status": 400}]
    client = make_client(server.base_url, cache=cache)
    with pytest.raises(LLMError):
        client.complete(ChatRequest(MESSAGES))
    assert len(cache) == 0
    assert client.complete(ChatRequest(MESSAGES)).text.startswith("echo")
