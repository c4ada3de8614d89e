"""The one way out of the library: a helper retires with its reason and figures, and so does every
admitted helper that calls it, directly or through others (it could not run any more).

Every rule that retires goes through `retire_helpers`: the build's own statistics
(`retire_harmful`), an evaluation against a baseline (`vadar.library.tracking`), the validation
gate (`vadar.runs.validation`), a ground-truth recheck (`vadar.library.truth_checks`).
A retired helper leaves the prompts; its versions and decisions stay in history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from api_store import ApiStore, FunctionRecord


def callers_of(library: Sequence[FunctionRecord], names: Iterable[str]) -> dict[str, str]:
    """Every helper of `library` that calls one of `names`, directly or through another, each with
    the first (by name) of those gone helpers it calls: what cannot run once `names` are gone."""
    gone, callers = set(names), {}
    changed = True
    while changed:
        changed = False
        for record in library:
            broken = sorted(set(record.dependencies) & gone)
            if record.name not in gone and broken:
                callers[record.name] = broken[0]
                gone.add(record.name)
                changed = True
    return callers


def retire_helpers(store: ApiStore, reasons: Mapping[str, str], *, mode: str,
                   evidence: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, str]:
    """Retire each helper of `reasons`, and every admitted helper that calls one. Each gets a
    `retired` decision with its reason and figures (`evidence`); returns name -> reason."""
    retired = dict(reasons)
    for name, callee in callers_of(store.library(), reasons).items():
        retired[name] = f"it calls the retired helper {callee}"
    with store.transaction():
        for name, reason in retired.items():
            details = dict((evidence or {}).get(name, {}))
            store.record_decision(name, "retired", mode=mode, evidence={**details, "reason": reason})
            store.mark_retired(name, f"retired: {reason}")
    return retired


def retire_harmful(store: ApiStore, *, min_uses: int, below: float) -> dict[str, str]:
    """Retire admitted helpers whose programs on build questions are mostly wrong, with their callers.

    Later batches keep writing programs that call older helpers; one used by at least `min_uses`
    judged programs of which fewer than `below` were right leaves the prompts. Helpers added by
    hand are kept: no build judged them in. So is a helper admitted on a passed ground-truth check
    of its claim: it is shown right, so its programs' failures are the programs' (a CLEVR build
    retired a right `_objects_right_of` whose programs passed it sizes for boxes, 8 errors in 10),
    and the question-shape helpers one level up build on it.
    """
    decisions = [d for d in store.decisions() if d.decision == "admitted" and d.mode != "hand"]
    gated = {d.name for d in decisions}
    truth_checked = {d.name for d in decisions if _passed_truth_check(d.evidence)}
    admitted = {f.name for f in store.library()}
    reasons, figures = {}, {}
    for name, stats in store.function_stats().items():
        if name not in gated or name not in admitted or stats.judged < min_uses or (stats.accuracy or 0.0) >= below:
            continue
        if name in truth_checked:
            continue
        reasons[name] = f"programs using it were right {stats.correct} of {stats.judged} times"
        figures[name] = {"used": stats.used, "errors": stats.errors, "correct": stats.correct, "judged": stats.judged}
    return retire_helpers(store, reasons, mode="stats", evidence=figures) if reasons else {}


def _passed_truth_check(evidence: Mapping[str, Any]) -> bool:
    """Whether an admission's evidence records a passed ground-truth check of the helper's claim."""
    check = evidence.get("truth_check")
    return isinstance(check, Mapping) and check.get("passed") is True and bool(check.get("cases"))
