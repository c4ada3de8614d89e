"""What a build remembers not to try again: helpers rejected, retired, or never got right.

A helper the gate rejected for being wrong (its ground truth, its answers, its behaviour check),
one retired as harmful, and one no implementation got right cost a batch its tries; proposing
and implementing them again in the next batch only spends the same tries on the same outcome.
So they are shown to the Signature agent with their reason and screened out of its proposals.
A helper rejected only for lack of evidence (no program of its batch used it, too few did) is
another matter: new questions are new evidence, so it may come back, with its stored
implementation instead of a new one, if that implementation keeps today's helper rules
(`vadar.programs.helper_rules`, as every other way in does); one that breaks them is not tried again.
"""

from __future__ import annotations

from dataclasses import dataclass

from api_store import ApiStore, FunctionRecord, FunctionStatus
from vadar.programs.helper_rules import HelperRuleError, check_helper
from vadar.text import one_line

LACK_OF_EVIDENCE = ("Unused", "TooFewUses", "NoReference")  # problems new questions can answer
REASON_CHARS = 160  # a reason as the Signature agent reads it


@dataclass(frozen=True)
class Remembered:
    """A helper that is not in the library, and why; `code` when it may come back as it was."""

    name: str
    reason: str
    signature: str
    code: str | None = None
    dependencies: tuple[str, ...] = ()

    @property
    def blocked(self) -> bool:
        """Proposing it again would repeat a failure: it is screened out."""
        return self.code is None


def remembered_helpers(store: ApiStore) -> dict[str, Remembered]:
    """Every failed helper of the store by name: blocked, or reusable on new evidence."""
    last_problem: dict[tuple[str, int], str | None] = {}
    for decision in store.decisions():
        if decision.decision in ("rejected", "retired"):
            problem = (decision.evidence or {}).get("problem") if decision.decision == "rejected" else None
            last_problem[(decision.name, decision.version)] = problem
    remembered = {}
    for record in store.functions([FunctionStatus.FAILED, FunctionStatus.RETIRED]):
        problem = last_problem.get((record.name, record.version))
        reason = record.last_error or "failed"
        reusable = problem in LACK_OF_EVIDENCE and bool(record.code)
        broken = _broken_rule(record) if reusable else None
        if broken is not None:
            reusable, reason = False, f"its stored code breaks a helper rule: {broken}"
        remembered[record.name] = Remembered(record.name, one_line(reason, REASON_CHARS),
                                             record.signature, record.code if reusable else None,
                                             tuple(record.dependencies))
    return remembered


def _broken_rule(record: FunctionRecord) -> str | None:
    """The helper rule a stored helper breaks, or None."""
    try:
        check_helper(record.name, record.signature, record.docstring, record.code)
    except HelperRuleError as exc:
        return str(exc)
    return None
