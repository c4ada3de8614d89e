"""What a remote worker needs to answer the questions of one evaluation, as plain data.

The driver reads the library once (`read_library`) and ships it inside the job; workers never
open the library store, which is only grown on the driver.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from omni3d_bench.types import Dataset
from vadar.config import VadarConfig
from vadar.llm.chat import ChatModel
from vadar.runs.methods import LibrarySnapshot

LLMFactory = Callable[[VadarConfig, "str | None"], ChatModel]
"""Builds a worker's chat model from the configuration and the endpoint URL the driver uses."""


def endpoint_llm(config: VadarConfig, base_url: str | None) -> ChatModel:
    """The configured OpenAI-compatible endpoint (with the response cache when `llm.cache`)."""
    from vadar.llm.client import build_chat_model

    return build_chat_model(config, base_url=base_url)


@dataclass(frozen=True)
class QuestionJob:
    """One evaluation's method, settings, library snapshot, data set and module backends.

    `base_url` is the endpoint the driver talks to; every worker must be able to reach it.
    `llm_factory` must be importable by workers (a module-level function), as must `dataset`.
    """

    method: str
    config: VadarConfig
    library: LibrarySnapshot
    dataset: Dataset
    backends: dict[str, str]
    base_url: str | None = None
    llm_factory: LLMFactory = endpoint_llm
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def served_backends(self) -> set[str]:
        """Backends whose modules run in module actors: every one but the oracle (built in-task)."""
        return {backend for backend in self.backends.values() if backend != "oracle"}
