"""Turn the errors a user can fix into one `Error:` line and a non-zero exit, not a traceback.

Refused input (a setting, an option, a data set, a helper) exits 2, as a misspelt option does;
a job that could not finish (an endpoint down, a full disk) exits 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from vadar.app.errors import INPUT_ERRORS, JOB_ERRORS, missing_extra
from vadar.text import utf8_safe

REFUSED = 2
"""The exit status of refused input, everywhere (click's own for a usage error)."""
FAILED = 1
"""The exit status of a job that could not finish."""


def print_error(message: object, console: Console | None = None) -> None:
    """`Error: ...` on stderr; the text is escaped so settings like `[vision] x` survive rich markup."""
    console = console or Console(stderr=True)
    console.print(f"[red]Error:[/red] {escape(utf8_safe(str(message)))}", highlight=False, soft_wrap=True)


def refuse(message: object, console: Console | None = None) -> typer.Exit:
    """Print refused input as one line; the exit to raise."""
    print_error(message, console)
    return typer.Exit(code=REFUSED)


def fail(message: object, console: Console | None = None) -> typer.Exit:
    """Print a job that could not finish as one line; the exit to raise."""
    print_error(message, console)
    return typer.Exit(code=FAILED)


@contextmanager
def user_errors(console: Console | None = None) -> Iterator[None]:
    """Print known failures as `Error: ...` and exit 2 (refused input) or 1 (a failed job); Ctrl-C
    exits 130 with a resume hint.

    A missing optional extra (say `transformers` for `--modules real`) is one line naming the
    extra to install, not a traceback.
    """
    console = console or Console(stderr=True)
    try:
        yield
    except INPUT_ERRORS as exc:
        raise refuse(exc, console) from None
    except JOB_ERRORS as exc:
        raise fail(exc, console) from None
    except ModuleNotFoundError as exc:
        message = missing_extra(exc)
        if message is None:
            raise
        raise fail(message, console) from None
    except KeyboardInterrupt:
        console.print("interrupted: everything answered so far is saved; rerun the same command to resume")
        raise typer.Exit(code=130) from None
