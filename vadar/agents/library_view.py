"""What an agent may read of the library, and what the API agent reports for the library to store.

Agents never write to the store: they read through `LibraryView` (an `ApiStore` is one, typed down
to its reads), and the API agent reports attempts, implementations, searches and failures to an
`ImplementationLog`, which the library (`vadar.library.implementation_log`) keeps in the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from api_store import AttemptRecord, FunctionRecord, FunctionStatus


class LibraryView(Protocol):
    """The library's reads: current versions, the library, the attempts made; nothing that writes."""

    def current(self, name: str) -> FunctionRecord: ...

    def __contains__(self, name: object) -> bool: ...

    def attempts(self, name: str) -> list[AttemptRecord]: ...

    def functions(self, status: FunctionStatus | str | Iterable[FunctionStatus | str] | None = None, *,
                  include_failed: bool = False) -> list[FunctionRecord]: ...

    def library(self, *, with_candidates: bool = False) -> list[FunctionRecord]: ...


class ImplementationLog(Protocol):
    """What the API agent reports as it works, in the order it happens."""

    def attempt(self, name: str, attempt: int, *, code: str | None, error: str | None, test_call: str | None,
                test_result: str | None, passed: bool, prompt_hash: str) -> None:
        """One reply tried: its code, its error or its test call's result."""

    def implemented(self, name: str, code: str, dependencies: Sequence[str]) -> None:
        """A working implementation: a candidate for the gate."""

    def searched(self, name: str, evidence: Mapping[str, Any]) -> None:
        """A generate-and-test search ended, with its figures."""

    def failed(self, name: str, reason: str) -> None:
        """No working implementation: the proposal fails with `reason`."""
