"""The gate's outcome rule: a candidate's programs must be right more often than the same questions
answered without the batch's candidates, and the evidence it reads, question by question.

With gold answers, a question whose program with the candidates is right can at most tie without
them: its program without them is not written at first (`QuestionEvidence.assumed`) and counts as
right, the candidate's worst case. A decision that holds in the worst case holds; one that would
refuse the candidate asks for those programs one at a time (`Admission` in `vadar.library.admission`),
until the rule passes or none is left, so every decision is the one all the programs would give. A
shape helper whose programs were right on all five of its questions was written one program without
it, not five, when the first was wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Question
from vadar.library.candidates import Candidate
from vadar.library.gate import confirmed
from vadar.library.problems import Case, NoReference, NotBetter, Problem, TooFewUses, Unused
from vadar.library.sources import support
from vadar.programs.outcome import ProgramOutcome


@dataclass
class QuestionEvidence:
    """One build question: the programs written with and without the candidates, and the reference.

    `assumed`: labelled, its program with the candidates is right, and the one without them is not
    written yet; it counts as right (a tie) until a decision turns on it."""

    question: Question
    without: ProgramOutcome | None  # None: labelled, and the 'with' program reached no candidate, or assumed
    with_: ProgramOutcome
    reference: str | None = None
    uses: set[str] = field(default_factory=set)  # candidates the 'with' program reached
    assumed: bool = False

    def score(self, outcome: ProgramOutcome | None) -> float:
        if self.reference is None or outcome is None or outcome.error is not None:
            return 0.0
        return score_answer(outcome.answer, self.reference, self.question.answer_type,
                            self.question.metric)

    def score_without(self) -> float:
        """The program without the candidates' score; an assumed one's is full, the candidate's worst case."""
        return 1.0 if self.assumed else self.score(self.without)


class OutcomeRule:
    """Programs using the helper must be right more often than without it, on at least `min_uses`
    programs (a few yes/no questions answered alike by chance are no evidence).

    A helper whose ground-truth check passed on at least `MIN_TRUTH_CASES` cases is right by
    evidence far stronger than a batch's outcomes, and is admitted on it: its batch's questions are
    not written programs without it (the validation gate later withdraws what loses when each batch
    is judged without what it added). Of 97 such helpers at the gates of 20 builds, the batch's
    outcomes refused 4, each right by its cases: `_shape_of_object` and `_same_size` on 0 programs
    right of 2 against 1 of 2, `_color_of_object` on 0 of 3 against 2, `_distance_from_camera` on 1
    of 3 against 3. Programs calling a right helper and losing misuse it; a repair of the helper
    cannot help (one turned a right `_color_of_object` into one returning '0')."""

    def __init__(self, evidence: Sequence[QuestionEvidence], min_uses: int) -> None:
        self.evidence, self.min_uses = evidence, min_uses

    def __call__(self, candidate: Candidate) -> Problem | None:
        name = candidate.name
        truth = candidate.evidence.truth_check or {}
        if confirmed(truth):
            return None
        used = [e for e in self.evidence if name in e.uses]
        judged = [e for e in used if e.reference is not None]
        right_with = sum(e.score(e.with_) for e in judged)
        right_without = sum(e.score_without() for e in judged)
        cases = tuple(Case(e.question.question, str(e.reference), str(e.with_.error or e.with_.answer))
                      for e in judged if e.score(e.with_) < 1.0)
        if not used:
            return Unused("no program on its batch used it")
        verified = truth.get("passed") is True
        better = right_with > right_without or (verified and right_with >= right_without)
        weight = support([e.reference for e in judged]) + len(used) - len(judged)  # unjudged uses count whole
        if weight >= self.min_uses and judged and right_with >= 1 and better:
            return None
        if not judged:
            return NoReference("no reference answer to check it against", cases=cases)
        if weight < self.min_uses:
            return TooFewUses(f"used by {len(used)} programs, fewer than the {self.min_uses} needed as evidence"
                              + (" (a yes/no answer counts half)" if weight < len(used) else ""), cases=cases)
        return NotBetter(_compared(right_with, right_without, len(judged)), cases=cases)


def _compared(with_: float, without: float, questions: int) -> str:
    """Counts of right answers; a score sum when numeric answers earned partial credit."""
    if float(with_).is_integer() and float(without).is_integer():
        return f"programs using it were right {with_:g} of {questions} times, {without:g} without it"
    return (f"programs using it scored {with_:.2f} on {questions} questions, {without:.2f} without it "
            "(1 per right answer, partial credit for numbers)")
