"""How a helper got into the library (or did not), told from its stored decisions.

Each step of the way leaves a decision with its evidence: the search that implemented it
(`searched`), the gate's verdict (`admitted`, `rejected`, with the route, the ground-truth check,
the programs it reproduced or the outcomes with and without it), the validation gate's figures
(`validated`), a retirement. `vadar library show NAME` and the HTML report's library section tell
the same story from them, in the same words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vadar.agents.helper_search import weighing_note

_ROUTES = {"proposal": "proposed by the Signature agent, implemented by the API agent",
           "distilled": "distilled from a statement run shared by right programs",
           "group": "written for a group of similar questions"}


@dataclass
class HelperStory:
    """The helper's route, claim, search, checks and verdicts, each as one line of text."""

    name: str
    lines: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.lines)


def helper_story(name: str, decisions: Iterable[Mapping[str, Any]]) -> HelperStory:
    """The story of `name` from its decisions (the store's records or an export's dicts), oldest first."""
    story = HelperStory(name)
    for decision in decisions:
        kind, evidence = decision.get("decision"), decision.get("evidence") or {}
        version = f"v{decision.get('version')}"
        if kind == "searched":
            story.lines.append(f"{version} searched: {search_line(evidence)}")
        elif kind in ("admitted", "rejected"):
            story.lines.extend(_verdict_lines(version, kind, str(decision.get("mode", "")), evidence))
        elif kind == "validated":
            story.lines.append(f"{version} validated: {_validation_line(evidence)}")
        elif kind == "retired":
            story.lines.append(f"{version} retired ({decision.get('mode')}): {evidence.get('reason', '')}")
        elif kind == "repair":
            story.lines.append(f"{version} sent to a repair: {evidence.get('reason', '')}")
    return story


def search_line(evidence: Mapping[str, Any]) -> str:
    """`claim relation:left: sample 3 of 3 passed (3 ran, pass rate 0.33), 12 ground-truth cases, 1 round`."""
    if evidence.get("outcome"):
        return _outcome_line(evidence, evidence["outcome"])
    passed = evidence.get("passed") or []
    samples, rounds = evidence.get("samples", 0), evidence.get("rounds", 0)
    verdict = (f"sample {passed[0]} of {samples} passed" if passed else f"none of {samples} samples passed")
    line = (f"claim {evidence.get('claim')}: {verdict} ({evidence.get('working', 0)} ran, pass rate "
            f"{evidence.get('pass_rate', 0):.2f}), {evidence.get('cases', 0)} ground-truth cases, "
            f"{rounds} round{'s' if rounds != 1 else ''}")
    closest = evidence.get("closest_failures") or []
    return line + (f"; closest failure: {closest[0]}" if closest and not passed else "")


def _outcome_line(evidence: Mapping[str, Any], outcome: Mapping[str, Any]) -> str:
    """`by outcome on 4 build questions: sample 2 of 3 kept, right 3 of 4 (1 without it), 1 round`."""
    support, minimum = outcome.get("support", 0), outcome.get("minimum", 0)
    weight = outcome.get("weight", support)
    if weight < minimum:
        return (f"by outcome: programs on {support} build questions called it{weighing_note(support, weight)}, "
                f"fewer than the {minimum} a "
                "search needs; the greedy implementation kept")
    right, kept, rounds = outcome.get("right") or [], evidence.get("kept"), evidence.get("rounds", 0)
    verdict = f"sample {kept} of {evidence.get('samples', 0)} kept" if kept else \
        f"none of {evidence.get('samples', 0)} samples kept"
    best = f"{max(right):g}" if right else "0"
    assumed = outcome.get("assumed") or 0  # never written without it: counted right (`outcome_check`)
    without = f"at most {outcome.get('right_without', 0):g} without it, {assumed} assumed" if assumed else \
        f"{outcome.get('right_without', 0):g} without it"
    return (f"by outcome on {support} build questions: {verdict}, the best sample's programs right {best} of "
            f"{support} times ({without}; samples judged right "
            f"{', '.join(f'{r:g}' for r in right)}), {rounds} round{'s' if rounds != 1 else ''}")


def _verdict_lines(version: str, kind: str, mode: str, evidence: Mapping[str, Any]) -> list[str]:
    route = evidence.get("origin")
    lines = [f"{version} {kind} ({mode})" + (f": {evidence['reason']}" if evidence.get("reason") else "")]
    if route in _ROUTES:
        lines.append(f"    route: {_ROUTES[route]}")
    truth = evidence.get("truth_check")
    if truth and truth.get("claim"):
        credit = f", partial credit {truth['credit']:.2f}" if truth.get("credit") is not None else ""
        verdict = {True: "passed", False: "failed", None: "no evidence"}[truth.get("passed")]
        lines.append(f"    ground truth ({truth['claim']}): {verdict} on {truth.get('cases', 0)} cases{credit}")
    if evidence.get("programs") is not None:
        lines.append(f"    reproduced {evidence.get('reproduced')} of {evidence['programs']} right programs"
                     + (f", {evidence['tokens_saved']} tokens saved" if evidence.get("tokens_saved") else ""))
    if evidence.get("right_with") is not None:
        # no programs without it where ground truth confirmed it (`admission.OutcomeRule`)
        without = (f"{evidence['right_without']:g} without it" if evidence.get("right_without") is not None
                   else "none written without it")
        if evidence.get("assumed_ties"):  # right with it, not written without it (`outcome_rule`)
            without = f"at most {without}, {evidence['assumed_ties']} of them assumed"
        lines.append(f"    programs using it right {evidence['right_with']:g} times, "
                     f"{without} ({len(evidence.get('used_by') or [])} used it)")
    return lines


def _validation_line(evidence: Mapping[str, Any]) -> str:
    tally = evidence.get("tally")
    totals = f"vadar {evidence.get('vadar', 0):g}, static-api {evidence.get('static', 0):g} on " \
             f"{evidence.get('questions', 0)} judged build questions"
    if not tally:
        return f"no judged build question used it ({totals})"
    return (f"won {tally['wins']:g}, lost {tally['losses']:g} on the {len(tally.get('questions') or [])} "
            f"build questions that used it ({totals})")
