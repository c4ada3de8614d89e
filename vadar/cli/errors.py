"""Turn the errors a user can fix into one clear line and a non-zero exit, not a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from api_store import StoreError
from base_modules.module import ModuleError
from base_modules.registry import BackendError
from omni3d_bench.types import DatasetError
from vadar.agents.program import InfrastructureFailure
from vadar.config import ConfigError
from vadar.llm.embedded import EmbeddedServerError
from vadar.llm.errors import LLMError
from vadar.llm.model_files import ModelFilesError

USER_ERRORS: tuple[type[BaseException], ...] = (
    ConfigError, DatasetError, StoreError, LLMError, EmbeddedServerError, ModelFilesError,
    ModuleError, InfrastructureFailure, BackendError,
)


@contextmanager
def user_errors(console: Console | None = None) -> Iterator[None]:
    """Print known failures as `error: ...` and exit 1; Ctrl-C exits 130 with a resume hint."""
    console = console or Console(stderr=True)
    try:
        yield
    except USER_ERRORS as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from None
    except KeyboardInterrupt:
        console.print("interrupted: everything answered so far is saved; rerun the same command to resume")
        raise typer.Exit(code=130) from None
