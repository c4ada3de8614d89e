"""A `Session`: what every job shares (configuration, LLM, library store, sandboxes, progress).

It is opened and closed as one unit, so the embedded server, the sandbox workers and the database
never outlive a command.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from api_store import ApiStore
from vadar.programs.outcome import Executor
from vadar.config import SandboxConfig, VadarConfig
from vadar.sandbox import SandboxPool
from vadar.llm.chat import ChatModel
from vadar.llm.usage import UsageTracker
from vadar.runs.progress import MeteredChatModel, Progress


@dataclass
class Session:
    config: VadarConfig
    llm: ChatModel
    store: ApiStore
    usage: UsageTracker
    model_name: str
    progress: Progress = field(default_factory=Progress)
    sandboxes: SandboxPool = field(default_factory=SandboxPool)

    @property
    def executor(self) -> Executor:
        """Runs generated code on an idle sandbox worker: parallel questions never queue for one."""
        return sandbox_executor(self.sandboxes, self.config.sandbox)


def sandbox_pool(limits: SandboxConfig) -> SandboxPool:
    """The sandbox workers of a job, under the configured limits."""
    return SandboxPool(timeout_s=limits.timeout_s, memory_mb=limits.memory_mb, max_stdout_chars=limits.max_stdout_chars)


def sandbox_executor(sandboxes: SandboxPool, limits: SandboxConfig) -> Executor:
    """Runs generated code on an idle worker of `sandboxes` under the configured limits."""
    return functools.partial(sandboxes.execute, timeout_s=limits.timeout_s,
                             memory_mb=limits.memory_mb, max_stdout_chars=limits.max_stdout_chars)


@contextmanager
def open_session(config: VadarConfig, *, llm: ChatModel | None = None,
                 progress: Progress | None = None) -> Iterator[Session]:
    """Open the store and an LLM (the given one, else the configured or embedded endpoint).

    With a `progress`, every LLM request is reported to it, and server start-up is announced. A
    given LLM that accounts its calls (a double with a `usage` tracker) shares that tracker.
    """
    given_usage = getattr(llm, "usage", None)
    usage = given_usage if isinstance(given_usage, UsageTracker) else UsageTracker()
    shown = progress or Progress()
    sandboxes = sandbox_pool(config.sandbox)
    store = ApiStore(config.paths.database)

    def session(model: ChatModel, name: str) -> Session:
        metered = MeteredChatModel(model, progress) if progress is not None else model
        return Session(config, metered, store, usage, name, shown, sandboxes)

    try:
        if llm is not None:
            yield session(llm, getattr(llm, "model", None) or config.llm.model)
            return
        from vadar.llm.client import build_chat_model
        from vadar.llm.embedded import open_endpoint

        with (open_endpoint(config, announce=shown.announce) as base_url,
              build_chat_model(config, base_url=base_url, usage=usage,
                               on_token=lambda _piece: shown.on_token(1)) as client):
            yield session(client, config.llm.model)  # an abort discards the replies it had pending
    finally:
        sandboxes.close()
        store.close()
