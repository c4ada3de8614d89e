"""ResponseCache: round trip, persistence, concurrent writers, corrupt files."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatResponse, request_key
from vadar.llm.errors import LLMCacheError

RESPONSE = ChatResponse("hello", prompt_tokens=12, completion_tokens=3, cached_prompt_tokens=8, latency_s=1.5, model="m", finish_reason="stop")


def test_round_trip_keeps_tokens_and_metadata(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "sub" / "c.sqlite")
    assert cache.get("missing") is None
    cache.put("k1", {"model": "m", "messages": []}, RESPONSE)
    assert cache.get("k1") == RESPONSE
    assert len(cache) == 1
    cache.put("k1", {"model": "m"}, ChatResponse("newer"))
    assert cache.get("k1").text == "newer" and len(cache) == 1
    assert ResponseCache(tmp_path / "sub" / "c.sqlite").get("k1").text == "newer"


def test_uses_wal_and_stores_the_request(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, RESPONSE)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        model, request = conn.execute("SELECT model, request FROM responses").fetchone()
    assert model == "m" and '"content":"hi"' in request


def test_request_key_is_canonical() -> None:
    a = request_key(model="m", messages=[{"role": "user", "content": "x"}], temperature=0.0)
    b = request_key(temperature=0.0, messages=[{"content": "x", "role": "user"}], model="m")
    assert a == b and len(a) == 64
    assert a != request_key(model="m", messages=[{"role": "user", "content": "x"}], temperature=0.1)


def test_corrupt_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(LLMCacheError) as info:
        ResponseCache(path)
    assert str(path) in str(info.value) and "delete it" in str(info.value)


def test_malformed_entry_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", {}, RESPONSE)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = 'not json'")
    with pytest.raises(LLMCacheError, match="malformed"):
        ResponseCache(path).get("k")


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")

    def write(worker: int) -> None:
        for i in range(25):
            cache.put(f"{worker}-{i}", {}, ChatResponse(f"{worker}-{i}"))
            assert cache.get(f"{worker}-{i}") is not None

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 100 and cache.get("3-24").text == "3-24"


def _write_many(cache: ResponseCache, worker: int) -> None:
    for i in range(20):
        cache.put(f"{worker}-{i}", {"model": "m"}, ChatResponse("x" * 2000))


def test_forked_processes_write_through_an_inherited_cache(tmp_path: Path) -> None:
    """A worker pool forked after the cache was opened (the usual pattern) must not lose entries."""
    path = tmp_path / "c.sqlite"
    parent = ResponseCache(path)
    parent.put("parent", {}, RESPONSE)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_many, args=(parent, w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(20)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert len(parent) == 61 and all(parent.get(f"{w}-19").text == "x" * 2000 for w in range(3))
    assert len(ResponseCache(path)) == 61
