"""A helper on its way into the library, whichever route it came by, and the evidence kept about it.

Three routes propose helpers: the Signature and API agents (top-down proposals), statement runs
shared by right programs (distilled), and one helper written for a group of similar questions.
Each becomes a `Candidate`; the admission gate (`vadar.library.gate`) runs its ordered checks on
it and stores it, with its `Evidence`, or says why not.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from api_store.evidence import VerifiedProgram


class Route(str, Enum):
    """How a candidate was found; stored as the evidence's `origin`."""

    PROPOSAL = "proposal"
    DISTILLED = "distilled"
    GROUP = "group"

    @property
    def decision_mode(self) -> str | None:
        """The store's decision mode for this route (a proposal's is its admission mode)."""
        return None if self is Route.PROPOSAL else "distilled"


@dataclass(frozen=True)
class Use:
    """A right build program rewritten to call the candidate: it must still give its answer."""

    source: VerifiedProgram
    code: str


@dataclass
class Evidence:
    """What the gate found, stored with the decision (`Candidate.stored_evidence`); empty fields are
    left out.

    Proposals record how programs with and without the candidates scored (`used_by`,
    `right_with`, `right_without`); distilled and group helpers record the programs they
    reproduced; every route records its ground-truth check.
    """

    questions: list[str] | int | None = None  # question ids (a proposal: how many questions its batch had)
    uses: int | None = None
    used_by: list[str] | None = None
    right_with: float | None = None
    right_without: float | None = None
    assumed_ties: int | None = None  # of those, questions its programs got right, no program without it written
    tokens_saved: int | None = None
    pattern: str | None = None
    frame: str | None = None
    reproduced: int | None = None
    programs: int | None = None
    changed: list[str] | None = None
    truth_check: dict[str, Any] | None = None
    frame_check: dict[str, Any] | None = None
    left_out: list[str] | None = None
    docstring_rewritten_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evidence:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def route_of(evidence: dict[str, Any]) -> Route | None:
    """The route a stored decision's evidence records, if any."""
    try:
        return Route(evidence.get("origin"))
    except ValueError:
        return None


@dataclass
class Candidate:
    """A helper the gate decides on: its text, its route, the rewritten programs it must reproduce.

    It reads like a stored function record (`name`, `signature`, `docstring`, `code`,
    `dependencies`), so namespaces and ground-truth checks take it before the store holds it.
    """

    route: Route
    name: str
    signature: str
    docstring: str
    code: str
    uses: list[Use] = field(default_factory=list)
    evidence: Evidence = field(default_factory=Evidence)
    dependencies: tuple[str, ...] = ()

    def stored_evidence(self) -> dict[str, Any]:
        """The evidence as the store keeps it: the route as `origin`, then every field found."""
        return {"origin": self.route.value, **self.evidence.to_dict()}
