"""A `Session`: what every job shares (configuration, LLM, library store, sandbox limits).

It is opened and closed as one unit, so the embedded server and the database never outlive a
command.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from api_store import ApiStore
from vadar.agents.outcome import Executor
from vadar.config import VadarConfig
from vadar.llm.chat import ChatModel
from vadar.llm.usage import UsageTracker
from vadar.sandbox import execute


@dataclass
class Session:
    config: VadarConfig
    llm: ChatModel
    store: ApiStore
    usage: UsageTracker
    model_name: str

    @property
    def executor(self) -> Executor:
        limits = self.config.sandbox
        return functools.partial(execute, timeout_s=limits.timeout_s, memory_mb=limits.memory_mb,
                                 max_stdout_chars=limits.max_stdout_chars)


@contextmanager
def open_session(config: VadarConfig, *, llm: ChatModel | None = None) -> Iterator[Session]:
    """Open the store and an LLM (the given one, else the configured or embedded endpoint)."""
    usage = UsageTracker()
    store = ApiStore(config.paths.database)
    try:
        if llm is not None:
            yield Session(config, llm, store, usage, getattr(llm, "model", None) or config.llm.model)
            return
        from vadar.llm.client import build_chat_model
        from vadar.llm.embedded import open_endpoint

        with open_endpoint(config) as base_url:
            client = build_chat_model(config, base_url=base_url, usage=usage)
            try:
                yield Session(config, client, store, usage, config.llm.model)
            finally:
                client.close()
    finally:
        store.close()
