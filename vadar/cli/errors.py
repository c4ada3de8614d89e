"""Turn the errors a user can fix into one clear line and a non-zero exit, not a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from api_store import StoreError
from base_modules.module import ModuleError
from base_modules.registry import BackendError
from omni3d_bench.types import DatasetError
from vadar.agents.outcome import InfrastructureFailure
from vadar.config import ConfigError
from vadar.llm.embedded import EmbeddedServerError
from vadar.llm.errors import LLMError
from vadar.llm.model_files import ModelFilesError

USER_ERRORS: tuple[type[BaseException], ...] = (
    ConfigError, DatasetError, StoreError, LLMError, EmbeddedServerError, ModelFilesError,
    ModuleError, InfrastructureFailure, BackendError,
)


def print_error(message: object, console: Console | None = None) -> None:
    """`error: ...` on stderr; the text is escaped so settings like `[vision] x` survive rich markup."""
    console = console or Console(stderr=True)
    console.print(f"[red]error:[/red] {escape(str(message))}", highlight=False, soft_wrap=True)


@contextmanager
def user_errors(console: Console | None = None) -> Iterator[None]:
    """Print known failures as `error: ...` and exit 1; Ctrl-C exits 130 with a resume hint."""
    console = console or Console(stderr=True)
    try:
        yield
    except USER_ERRORS as exc:
        print_error(exc, console)
        raise typer.Exit(code=1) from None
    except KeyboardInterrupt:
        console.print("interrupted: everything answered so far is saved; rerun the same command to resume")
        raise typer.Exit(code=130) from None
