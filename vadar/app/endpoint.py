"""The LLM endpoint on its own: the embedded server in the foreground, and a throughput bench of
whichever endpoint is configured (`vadar llm serve`, `vadar llm bench`)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from vadar.config import VadarConfig

if TYPE_CHECKING:
    from vadar.llm.bench import BenchReport
    from vadar.llm.embedded import EmbeddedServer


@contextmanager
def serve(config: VadarConfig, *, port: int | None = None, on_loading: Callable[[str], None] | None = None,
          log_sink: Callable[[str], None] | None = None) -> Iterator[EmbeddedServer]:
    """The embedded OpenAI-compatible server, running for the block (its model assembled first)."""
    from vadar.llm.embedded import EmbeddedServer
    from vadar.llm.model_files import resolve_model_path

    embedded = dataclasses.replace(config.embedded, port=port) if port is not None else config.embedded
    model_path = resolve_model_path(embedded, config.paths.model_cache)
    if on_loading is not None:
        on_loading(str(model_path))
    with EmbeddedServer(embedded, config.llm.model, model_path, log_sink=log_sink) as server:
        yield server


def bench(config: VadarConfig, *, prompt_tokens: int, max_tokens: int, repeats: int,
          on_ready: Callable[[str, float], None] | None = None) -> BenchReport:
    """Prompt and decode throughput of the configured endpoint (the embedded server when none is set)."""
    import openai

    from vadar.llm.bench import run_bench
    from vadar.llm.embedded import open_endpoint
    from vadar.llm.errors import LLMError

    embedded = config.llm.base_url is None
    started = time.monotonic()
    try:
        with open_endpoint(config) as base_url:
            if embedded and on_ready is not None:
                on_ready(base_url, time.monotonic() - started)
            client = openai.OpenAI(base_url=base_url, api_key=config.llm.api_key, timeout=config.llm.timeout_s,
                                   max_retries=0)
            return run_bench(client, config.llm.model, prompt_tokens=prompt_tokens, max_tokens=max_tokens,
                             repeats=repeats, ignore_eos=embedded)
    except openai.OpenAIError as exc:
        raise LLMError(f"the endpoint failed the bench: {exc}") from exc
