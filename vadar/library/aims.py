"""What the Signature agent is aimed at: the steps of the batch's questions no helper covers yet,
the kinds of question no build program has answered right yet, helper names whose claims ground
truth can check, and what the library already has.

A small model proposes what the questions suggest to it, which is rarely what the programs get
wrong: every method scored 0 on metric heights (pixel heights, no focal length), while it proposed
counting helpers the API already made easy; and shown what a batch asks for without what the
library has, it proposed the names it had already admitted, batch after batch, and nothing else.
So the request names each helper the library has with its claim and the steps it covers, and asks
only for the steps nothing covers (`vadar.library.coverage`, each question parsed once), which
kinds of question still have no right program among the build questions so far (by family), and,
for those steps, names that state a checkable claim (`claims.CHECKABLE_NAMES`, `_objects_behind`,
`_same_shape`): such a helper is implemented by generate-and-test and kept only when ground truth
confirms it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from api_store.evidence import VerifiedProgram
from omni3d_bench.types import Question
from vadar.agents.signature import ProposalAims
from vadar.library.claims import CHECKABLE_NAMES, claim_label
from vadar.library.coverage import Helper, Step, helper_steps, steps_of, uncovered_steps
from vadar.programs.question_form import parse_question

UNSOLVED_SHOWN = 4  # kinds of question without a right program, listed at most
MIN_UNSOLVED = 2  # build questions of a kind, all wrong, before it is listed
HAS_SHOWN = 30  # library helpers listed at most, with their claims and the steps they cover


def proposal_aims(batch: Sequence[Question], built_from: Sequence[Question],
                  programs: Sequence[VerifiedProgram], library: Sequence[Helper] = (),
                  awaited: Collection[str] = ()) -> ProposalAims:
    """The aims for a batch: the steps of its questions `library` leaves uncovered (the counts and
    comparisons a question-shape helper in `awaited` may yet carry left to it), the unsolved kinds
    among `built_from`, checkable stubs for those steps, and what `library` already has."""
    missing = uncovered_steps([q.question for q in batch], library, awaited)
    asks = [f"{step.says} ({count} of {len(batch)} questions)" for step, count in missing.most_common()]
    claimed = {label for f in library if (label := claim_label(f.name, f.signature)) is not None}
    checkable = [(stub, says) for step in missing for stub, says in checkable_stubs(step)
                 if claim_label(stub[:stub.index("(")], stub[stub.index("("):]) not in claimed]
    needed = {step for q in batch for step in steps_of(parse_question(q.question))}
    return ProposalAims(asks, unsolved_kinds(built_from, programs), list(dict.fromkeys(checkable)),
                        library_lines(library, needed))


def checkable_stubs(step: Step) -> list[tuple[str, str]]:
    """Stubs whose names make a claim ground truth checks, for one uncovered step (none for a count
    or a comparison: no name of theirs makes a checkable claim)."""
    if step.kind == "relation":
        phrase = {"front": "in_front_of", "behind": "behind"}.get(step.value, f"{step.value}_of")
        return [(f"_objects_{phrase}(image: Image, bbox: BBox) -> list[BBox]",
                 f"the other objects {phrase.replace('_', ' ')} the object in bbox")]
    if step.kind == "same":
        return [(f"_same_{step.value}(image: Image, bbox1: BBox, bbox2: BBox) -> bool",
                 f"whether two objects share a {step.value}")]
    if step.kind == "attribute":
        return [(f"_{step.value}_of_object(image: Image, bbox: BBox) -> str", f"the {step.value} of the object in bbox")]
    if step.kind == "measure" and step.value in CHECKABLE_NAMES:
        return [(n.stub, n.says) for n in CHECKABLE_NAMES[step.value]]
    return []


def library_lines(library: Sequence[Helper], needed: Collection[Step] = ()) -> list[str]:
    """One line per helper the library has: its name, the claim it makes, the steps it covers; those
    covering a `needed` step first (in library order), up to HAS_SHOWN."""
    relevant = sorted(library, key=lambda helper: not helper_steps(helper.name, helper.signature) & set(needed))
    lines = []
    for helper in relevant[:HAS_SHOWN]:
        label = claim_label(helper.name, helper.signature)
        steps = "; ".join(step.says for step in sorted(helper_steps(helper.name, helper.signature)))
        lines.append(f"`{helper.name}`" + (f" (claims {label})" if label else "") + (f": {steps}" if steps else ""))
    return lines


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
