"""The errors a user can fix, in two kinds: input that is refused, and a job that could not finish.

Every command of the command line (and any other front end) prints either kind as one line; the
kinds differ only in the exit status (2 for refused input, as for a misspelt option; 1 for a job
that failed), so scripts can tell "fix the command" from "rerun it".
"""

from __future__ import annotations

from api_store import StoreError
from base_modules.module import ModuleError
from base_modules.registry import BackendError
from omni3d_bench.types import DatasetError
from vadar.app.library import LibraryError
from vadar.config import ConfigError
from vadar.library.hand import HandLibraryError
from vadar.library.importing import LibraryImportError
from vadar.llm.embedded import EmbeddedServerError
from vadar.llm.errors import LLMError
from vadar.llm.model_files import ModelFilesError
from vadar.programs.outcome import InfrastructureFailure
from vadar.report import ReportError
from vadar.runs.ablation import GridError
from vadar.runs.compare import CompareError
from vadar.runs.evaluation import RunStoppedError
from vadar.runs.executors.base import QuestionsLostError
from vadar.runs.storage import StorageError, describe

INPUT_ERRORS: tuple[type[BaseException], ...] = (
    ConfigError, DatasetError, BackendError, LibraryError, HandLibraryError, LibraryImportError, GridError,
    CompareError, ReportError,
)
"""Refused input: settings, methods, module names, data sets, images, helpers, files to read."""

JOB_ERRORS: tuple[type[BaseException], ...] = (
    StoreError, LLMError, EmbeddedServerError, ModelFilesError, ModuleError, InfrastructureFailure,
    QuestionsLostError, StorageError, RunStoppedError,
)
"""A job that could not finish (`LibraryError` is a `StoreError` too: told apart first): an endpoint down, a disk full, a library file broken, a run stopped."""

# Top-level modules of the optional extras in pyproject.toml, and the extra that installs each.
OPTIONAL_EXTRAS: dict[str, str] = {
    "torch": "vision", "transformers": "vision", "safetensors": "vision", "accelerate": "vision",
    "xllamacpp": "local", "pyarrow": "parquet", "mitsuba": "bench",
    "sam2": "vision-reference", "groundingdino": "vision-reference",
}


def missing_extra(exc: BaseException) -> str | None:
    """Text naming the extra to install, when `exc` is an optional extra's missing import."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    extra = OPTIONAL_EXTRAS.get(exc.name.split(".")[0])
    if extra is None:
        return None
    return (f"this needs the optional '{extra}' extra (module '{exc.name}' is not installed): "
            f"pip install 'vadar[{extra}]'")


def cannot_write(exc: OSError, target: object) -> StorageError:
    """A full or read-only target as the one-line failure every writer gives."""
    return StorageError(f"cannot write {exc.filename or target}: {describe(exc)}")
