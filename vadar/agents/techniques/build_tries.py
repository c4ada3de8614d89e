"""A labelled build's tries: programs written one by one until one is right (dspy's `BestOfN` with a
reward that is the gold answer and a threshold of "right").

The first program is the greedy one, the others sampled; the answer is the accepted program's,
else the greedy one's, and the cost is all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from vadar.agents.techniques.task import ProgramWriter, Task, merged
from vadar.programs.outcome import ProgramOutcome


@dataclass
class BuildTriesRecord:
    """How many programs were written and which one was accepted (None: none); stored under "build_tries"."""

    key: ClassVar[str] = "build_tries"

    tries: int
    accepted_try: int | None

    def to_json(self) -> dict[str, Any]:
        return {"tries": self.tries, "accepted_try": self.accepted_try}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BuildTriesRecord:
        return cls(int(data["tries"]), data.get("accepted_try"))

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> BuildTriesRecord | None:
        """The record in a results line written before the records (`tries`, `accepted_try`)."""
        return cls.from_json(extra) if "tries" in extra else None


class BuildTries:
    """Up to `tries` programs until `accept` takes one, as one outcome (recorded when `tries` > 1)."""

    def __init__(self, inner: ProgramWriter, accept: Callable[[ProgramOutcome], bool], tries: int) -> None:
        self.inner, self.accept, self.tries = inner, accept, tries

    def write(self, task: Task) -> ProgramOutcome:
        outcomes: list[ProgramOutcome] = []
        accepted: int | None = None
        for sample in range(max(self.tries, 1)):
            outcomes.append(self.inner.write(task.but(sample=sample)))
            if self.accept(outcomes[-1]):
                accepted = sample
                break
        result = merged(outcomes[accepted if accepted is not None else 0], outcomes)
        if self.tries > 1:
            result.techniques.put(BuildTriesRecord(len(outcomes), accepted))
        return result
