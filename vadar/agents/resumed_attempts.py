"""What an interrupted implementation left in the store: its attempts count, and the next reply sees the last.

A build resumed after a crash or Ctrl-C goes on where the API agent stopped: the attempts already
recorded for a function's version count against its limit, and the last failed one is put back into
the conversation with its error, as it would have been without the interruption.
"""

from __future__ import annotations

from api_store import AttemptRecord, FunctionRecord
from vadar import prompts
from vadar.agents.library_view import LibraryView


def attempts_made(store: LibraryView, record: FunctionRecord) -> int:
    """Attempts already recorded for this version of the function (by an interrupted run, say)."""
    return max((a.attempt for a in store.attempts(record.name) if a.version == record.version), default=0)


def failed_attempts(store: LibraryView, record: FunctionRecord) -> list[AttemptRecord]:
    """Recorded attempts at this version of the function that ended in an error, oldest first."""
    return [a for a in store.attempts(record.name) if a.version == record.version and a.error]


def resumed_turns(store: LibraryView, record: FunctionRecord) -> list[dict[str, str]]:
    """After an interruption, the last recorded attempt and its error, so the next one can fix it."""
    failed = failed_attempts(store, record)
    if not failed:
        return []
    last = failed[-1]
    reply = f"```python\n{last.code}\n```" if last.code else "(no code)"
    return [{"role": "assistant", "content": reply},
            {"role": "user", "content": prompts.render(
                "api_retry", error=last.error, test_call=last.test_call, name=record.name)}]


def last_error(store: LibraryView, record: FunctionRecord) -> str | None:
    failed = failed_attempts(store, record)
    return failed[-1].error if failed else None
