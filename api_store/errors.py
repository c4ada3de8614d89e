"""Exceptions raised by the store; all derive from `StoreError` so callers can catch one type."""

from __future__ import annotations


class StoreError(Exception):
    """The store cannot do what was asked; the message says what and, where relevant, which file."""


class UnknownFunctionError(StoreError, KeyError):
    """No function of that name exists. Also a `KeyError`, since lookup by name is what failed."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no function named {name!r} in the library")
        self.name = name

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class DuplicateFunctionError(StoreError):
    """A proposal clashes with an existing function (same name, or same normalised name)."""

    def __init__(self, name: str, existing: str) -> None:
        if name == existing:
            message = f"function {name!r} already exists"
        else:
            message = f"function {name!r} is a trivial rename of existing function {existing!r}"
        super().__init__(message)
        self.name = name
        self.existing = existing
