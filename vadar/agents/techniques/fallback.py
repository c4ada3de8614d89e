"""Without the library, once: a question the library's prompt left without a working program is
asked again with the predefined modules alone (static-api's prompt).

A 1.5B model that fails with the library in view often fails on something the library brought
in (a helper's result passed where a box goes, a worked example of another shape copied at
length until the reply is cut off). The same model without them answers a different set of
questions, so a question that ends with no program at all gets that second chance. The answer is
the second program's where it works, else the first's error; the cost is both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from vadar.agents.techniques.task import merged
from vadar.programs.outcome import ProgramOutcome


@dataclass
class FallbackRecord:
    """The first program's error, and whether the program written without the library worked;
    stored under "fallback"."""

    key: ClassVar[str] = "fallback"

    first_error: str
    worked: bool

    def to_json(self) -> dict[str, Any]:
        return {"first_error": self.first_error, "worked": self.worked}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FallbackRecord:
        return cls(str(data["first_error"]), bool(data["worked"]))

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> FallbackRecord | None:
        return None  # newer than the flat `extra` fields


def no_working_program(outcome: ProgramOutcome) -> bool:
    """The question ended with an error that is the program's (not the endpoint's or the sandbox's)."""
    return outcome.error is not None and not outcome.infrastructure


def with_fallback(first: ProgramOutcome, without_library: Callable[[], ProgramOutcome]) -> ProgramOutcome:
    """`first`, or where it has no working program, the program written without the library."""
    if not no_working_program(first):
        return first
    second = without_library()
    worked = not no_working_program(second) and second.error is None
    # the endpoint or the sandbox failed on the second: the question is asked again on resume
    result = merged(second if worked or second.infrastructure else first, [first, second])
    result.seconds = first.seconds + second.seconds
    result.techniques.put(FallbackRecord(" ".join((first.error or "").split())[:300], worked))
    return result
