"""Live: assemble the real model, start the embedded server, get a chat completion (slow; -m live)."""

from __future__ import annotations

import os
import time

import pytest

from vadar.config import load_config
from vadar.llm.embedded import EmbeddedServer
from vadar.llm.model_files import resolve_model_path

pytestmark = pytest.mark.live


def test_embedded_server_answers_chat_completion() -> None:
    openai = pytest.importorskip("openai")
    pytest.importorskip("xllamacpp")
    config = load_config(env={})  # defaults only: the real model cache, a free port
    config.embedded.n_ctx = 2048
    started = time.monotonic()
    model_path = resolve_model_path(config.embedded, config.paths.model_cache, progress=False)
    with EmbeddedServer(config.embedded, config.llm.model, model_path) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-no-key-needed", max_retries=0)
        assert [m.id for m in client.models.list().data] == [config.llm.model]
        messages = [
            {"role": "system", "content": "You write Python. Answer with code only."},
            {"role": "user", "content": "Write an expression that adds 2 and 3."},
        ]
        first = client.chat.completions.create(model=config.llm.model, messages=messages, max_tokens=12, temperature=0)
        assert first.choices[0].message.content
        assert "5" in first.choices[0].message.content or "+" in first.choices[0].message.content
        again = client.chat.completions.create(model=config.llm.model, messages=messages, max_tokens=12, temperature=0)
        cached = again.usage.prompt_tokens_details.cached_tokens  # type: ignore[union-attr]
        assert cached and cached >= again.usage.prompt_tokens - 2  # the repeated prompt hit the cache
        pid = server._proc.pid  # type: ignore[union-attr]
    print(f"live embedded round trip: {time.monotonic() - started:.1f}s, startup {server.startup_s:.1f}s")
    assert not server.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
