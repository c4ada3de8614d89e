"""What the Signature agent is aimed at: what the build's questions ask for, the kinds of question no
build program has answered right yet, and helper names whose claims ground truth can check.

A small model proposes what the questions suggest to it, which is rarely what the programs get
wrong: every method scored 0 on metric heights (pixel heights, no focal length), while it proposed
counting helpers the API already made easy. So the request says which quantities and relations
the batch asks for (`programs.question_form`, each question parsed once), which kinds of question
still have no right program among the build questions so far (by family), and, for what is asked,
names that state a checkable claim (`claims.CHECKABLE_NAMES`): such a helper is implemented by
generate-and-test and kept only when ground truth confirms it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from api_store.evidence import VerifiedProgram
from omni3d_bench.types import Question
from vadar.agents.signature import ProposalAims
from vadar.library.claims import CHECKABLE_NAMES
from vadar.programs.question_form import QuestionForm, parse_question

UNSOLVED_SHOWN = 4  # kinds of question without a right program, listed at most
MIN_UNSOLVED = 2  # build questions of a kind, all wrong, before it is listed

_ASKS = {
    "height": "one object's height in metres", "width": "one object's width in metres",
    "length": "one object's length in metres", "depth": "one object's depth in metres",
    "size": "one object's size in metres", "distance": "a distance in metres (between two objects, or from the camera)",
    "comparison": "which of two objects is taller or larger", "ratio": "how many times taller or larger one object is",
    "spatial": "the objects left of, right of, in front of or behind another object",
    "shared": "the objects with the same color, shape, material or size as another",
    "count": "counting the objects that match a description",
}


def needs_of(form: QuestionForm) -> list[str]:
    """The kinds of computation a question asks for, as keys of `_ASKS`."""
    needs = []
    if form.asked_dimension:
        needs.append(form.asked_dimension)
    if form.relation is not None and (form.relation != "distance" or form.answer_type == "number"):
        needs.append(form.relation)
    if form.spatial and form.relation != "distance":
        needs.append("spatial")
    if form.shared_attribute:
        needs.append("shared")
    if form.answer_type == "count":
        needs.append("count")
    return needs


def proposal_aims(batch: Sequence[Question], built_from: Sequence[Question],
                  programs: Sequence[VerifiedProgram]) -> ProposalAims:
    """The aims for a batch: its needs, the unsolved kinds among `built_from`, checkable names for its needs."""
    counted = Counter(need for q in batch for need in needs_of(parse_question(q.question)))
    asks = [f"{_ASKS[need]} ({count} of {len(batch)} questions)" for need, count in counted.most_common()]
    checkable = [(n.stub, n.says) for need in _checkable_needs(counted) for n in CHECKABLE_NAMES[need]]
    return ProposalAims(asks, unsolved_kinds(built_from, programs), checkable)


def _checkable_needs(counted: Counter[str]) -> list[str]:
    found = []
    for need in counted:
        key = "height" if need in ("height", "comparison", "ratio") else need
        if key in CHECKABLE_NAMES and key not in found:
            found.append(key)
    return found


def unsolved_kinds(questions: Sequence[Question], programs: Sequence[VerifiedProgram]) -> list[str]:
    """Kinds of question (families) with at least MIN_UNSOLVED build questions and no right program."""
    right = {p.question_id for p in programs if p.correct}
    judged = {p.question_id for p in programs if p.correct is not None}
    by_kind: dict[str, list[Question]] = {}
    for question in questions:
        if question.question_id in judged and question.family:
            by_kind.setdefault(question.family, []).append(question)
    lines = []
    for kind, members in sorted(by_kind.items(), key=lambda item: -len(item[1])):
        if len(members) >= MIN_UNSOLVED and not any(q.question_id in right for q in members):
            lines.append(f'"{members[0].question}" ({kind}: 0 of {len(members)} right)')
    return lines[:UNSOLVED_SHOWN]
