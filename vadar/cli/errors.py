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
from vadar.programs.outcome import InfrastructureFailure
from vadar.config import ConfigError
from vadar.runs.executors.base import QuestionsLostError
from vadar.runs.evaluation import RunStoppedError
from vadar.runs.storage import StorageError
from vadar.llm.embedded import EmbeddedServerError
from vadar.llm.errors import LLMError
from vadar.llm.model_files import ModelFilesError
from vadar.text import utf8_safe

USER_ERRORS: tuple[type[BaseException], ...] = (
    ConfigError, DatasetError, StoreError, LLMError, EmbeddedServerError, ModelFilesError,
    ModuleError, InfrastructureFailure, BackendError, QuestionsLostError, StorageError,
    RunStoppedError,
)


# Top-level modules of the optional extras in pyproject.toml, and the extra that installs each.
OPTIONAL_EXTRAS: dict[str, str] = {
    "torch": "vision", "transformers": "vision", "safetensors": "vision", "accelerate": "vision",
    "xllamacpp": "local", "pyarrow": "parquet", "mitsuba": "bench",
    "sam2": "vision-reference", "groundingdino": "vision-reference",
}


def missing_extra(exc: BaseException) -> str | None:
    """`error` text naming the extra to install, when `exc` is an optional extra's missing import."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    extra = OPTIONAL_EXTRAS.get(exc.name.split(".")[0])
    if extra is None:
        return None
    return (f"this needs the optional '{extra}' extra (module '{exc.name}' is not installed): "
            f"pip install 'vadar[{extra}]'")


def print_error(message: object, console: Console | None = None) -> None:
    """`error: ...` on stderr; the text is escaped so settings like `[vision] x` survive rich markup."""
    console = console or Console(stderr=True)
    console.print(f"[red]error:[/red] {escape(utf8_safe(str(message)))}", highlight=False, soft_wrap=True)


@contextmanager
def user_errors(console: Console | None = None) -> Iterator[None]:
    """Print known failures as `error: ...` and exit 1; Ctrl-C exits 130 with a resume hint.

    A missing optional extra (say `transformers` for `--modules real`) is one line naming the
    extra to install, not a traceback.
    """
    console = console or Console(stderr=True)
    try:
        yield
    except USER_ERRORS as exc:
        print_error(exc, console)
        raise typer.Exit(code=1) from None
    except ModuleNotFoundError as exc:
        message = missing_extra(exc)
        if message is None:
            raise
        print_error(message, console)
        raise typer.Exit(code=1) from None
    except KeyboardInterrupt:
        console.print("interrupted: everything answered so far is saved; rerun the same command to resume")
        raise typer.Exit(code=130) from None
