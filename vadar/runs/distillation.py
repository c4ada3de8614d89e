"""The bottom-up step of a build batch: answer its questions, keep the right programs, distil helpers.

Distillation learns from programs that were right (`vadar.library.distill`). A batch whose
proposals all failed, or a build with proposals off, has written no program yet, so each batch
question first gets one program from the same answerer an evaluation uses (library and worked
examples included), recorded with its gold answer as evidence (variant `build`). Right programs are
the binding constraint (a CLEVR build had 33 of 100), so with `library.build_tries = K` a question
whose greedy program is wrong gets up to K - 1 sampled ones until one is right. A right program is
also run on up to `library.scene_checks` other build scenes its question applies to
(`vadar.library.scene_check`): wrong on one, it was right by chance, is recorded not right, and
another is tried. A yes/no question no other scene can check never gets another program, since a
wrong program guesses it right half the time. A question whose shape family (`question_shape`: the
shape with its spatial relations aside) already has `library.build_programs_per_shape` right programs
gets none: a question is shown `examples_k` worked examples, of its exact shape or else of its family,
and in 100-question builds these programs were the largest share of the model time. Then the right
programs of every build question so far are searched for patterns. Needs gold answers: with
`library.admission = "unlabelled"` nothing is distilled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence

from api_store import FunctionRecord
from api_store.evidence import SceneCheck, VerifiedProgram
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Question
from vadar.programs.helper_rules import fit_library
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.question_shape import shape_of
from vadar.library.batch import BuildBatch
from vadar.library.clusters import GroupWriter
from vadar.library.distill import Distiller
from vadar.library.retrieval import usable_example
from vadar.library.scene_check import SceneChecker, build_scenes, check_right_programs
from vadar.library.sources import DistillReport, record_build_program
from vadar.library.truth_checks import TruthChecks
from vadar.runs.methods import make_answerer
from vadar.runs.prepare import PreparedData
from vadar.runs.session import Session



def distill_batch(session: Session, data: PreparedData, batch: BuildBatch) -> DistillReport | None:
    """Write the missing programs of the batch's questions, then distil from the right programs of
    every build question so far (`batch.built_from`)."""
    settings = session.config.library
    if not settings.distill or settings.admission == "unlabelled":
        return None
    store = session.store
    build = [*batch.earlier, *batch.built_from]
    checker = SceneChecker(session.executor, data.dataset, data.modules, build_scenes(build), settings.scene_checks)
    recorded = store.verified_programs()
    answered = {p.question_id for p in recorded if p.code}
    todo = [q for q in batch.questions if q.question_id not in answered and q.answer is not None]
    if todo:
        judge = BuildJudge(checker, fit_library(store.library()))
        answer, library = make_answerer("vadar", session, data, accept=judge.accept, tries=settings.build_tries)
        names = {f.name for f in library}
        for question in todo:
            # read again per question: this batch's programs count as soon as they are recorded
            quota = ShapeQuota(store.verified_programs(), names, settings.build_programs_per_shape)
            if quota.full(question.question):
                batch.on_event(f"build question {question.question_id}: its shape family has "
                               f"{quota.limit} right programs already, none written")
                continue
            batch.on_event(f"writing a program for build question {question.question_id}")
            outcome = answer(question)
            check = judge.scene_check(question, outcome)
            right = judge.right(question, outcome)
            record_build_program(store, batch.batch_id, question, outcome, right, names, other_scenes=check)
    checked, chance = check_right_programs(store, checker, build, batch.on_event)
    if checked:
        batch.on_event(f"ran {checked} right programs on other build scenes: {chance} right by chance")
    batch.on_event("distilling helpers from the right build programs")
    return distill_helpers(session, data, batch.built_from, batch.batch_id, batch.on_event)


Family = tuple[str, str | None, str | None]  # `QuestionShape.family`: answer kind, relation, subject


class ShapeQuota:
    """Right build programs per shape family (one per question), against `limit` (0: no limit). Only
    those a worked example can be (`retrieval.usable_example`): a program shown to no question does
    not stand for its family."""

    def __init__(self, recorded: Iterable[VerifiedProgram], library: Collection[str], limit: int) -> None:
        self.limit = limit
        right = {p.question_id: p.question for p in recorded if usable_example(p, library)}
        self._right: Counter[Family] = Counter(shape_of(text).family for text in right.values())

    def full(self, question: str) -> bool:
        return self.limit > 0 and self._right[shape_of(question).family] >= self.limit


def is_right(question: Question, outcome: ProgramOutcome) -> bool:
    """A working program whose answer scores full marks against the question's label."""
    return outcome.error is None and score_answer(outcome.answer, question.answer, question.answer_type,
                                                  question.metric) >= 1.0


class BuildJudge:
    """Whether a build program is right: on its own scene and on the other build scenes that check it."""

    def __init__(self, checker: SceneChecker, library: Sequence[FunctionRecord]) -> None:
        self.checker, self.library = checker, list(library)
        self._checks: dict[tuple[str, str], SceneCheck | None] = {}

    def scene_check(self, question: Question, outcome: ProgramOutcome) -> SceneCheck | None:
        """What a program right on its scene gave on other scenes (None: wrong here, or nothing to check)."""
        if not is_right(question, outcome):
            return None
        key = (question.question_id, outcome.program or "")
        if key not in self._checks:
            self._checks[key] = self.checker.check(question, outcome.program or "", self.library)
        return self._checks[key]

    def right(self, question: Question, outcome: ProgramOutcome) -> bool:
        check = self.scene_check(question, outcome)
        return is_right(question, outcome) and (check is None or check.holds)

    def accept(self, question: Question, outcome: ProgramOutcome) -> bool:
        """Stop writing programs for `question`: this one is right, or it is a yes/no question no other
        scene can check (another try would only be a lucky guess stored as verified)."""
        return self.right(question, outcome) or (guessable(question) and not self.checker.applies(question))


def guessable(question: Question) -> bool:
    return str(question.answer).strip().casefold() in ("yes", "no")


def distill_helpers(session: Session, data: PreparedData, questions: Sequence[Question], batch_id: int | None = None,
                    on_event: Callable[[str], None] | None = None) -> DistillReport:
    """Both routes over the right programs of `questions`: one helper per group of similar questions
    (`library.distill_groups`), then statement runs shared across programs."""
    settings = session.config.library
    kwargs = dict(min_uses=settings.distill_min_uses, max_helpers=settings.distill_max_helpers,
                  truth=TruthChecks(session.executor), on_event=on_event)
    report = DistillReport()
    if settings.distill_groups:
        grouped = GroupWriter(session.store, session.llm, session.executor, **kwargs)
        report = grouped.write(data.dataset, data.modules, questions, batch_id=batch_id)
    fragments = Distiller(session.store, session.llm, session.executor, **kwargs).distill(
        data.dataset, data.modules, questions, batch_id=batch_id)
    return report.merge(fragments)
