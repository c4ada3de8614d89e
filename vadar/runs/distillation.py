"""The bottom-up step of a build batch: answer its questions, keep the right programs, distil helpers.

Distillation learns from programs that were right (`vadar.library.distill`). A batch whose
proposals all failed, or a build with proposals off, has written no program yet, so each batch
question first gets one program from the same answerer an evaluation uses (library and worked
examples included), recorded with its gold answer as evidence (variant `build`). Right programs are
the binding constraint (a CLEVR build had 33 of 100), so with `library.build_tries = K` a question
whose greedy program is wrong gets up to K - 1 sampled ones until one is right; yes/no questions
never do, since a wrong program guesses them right half the time. Then the right
programs of every build question so far are searched for patterns. Needs gold answers: with
`library.admission = "unlabelled"` nothing is distilled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Question
from vadar.programs.outcome import ProgramOutcome
from vadar.library.batch import BuildBatch
from vadar.library.clusters import GroupWriter
from vadar.library.distill import Distiller
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
    answered = {p.question_id for p in store.verified_programs() if p.code}
    todo = [q for q in batch.questions if q.question_id not in answered and q.answer is not None]
    if todo:
        answer, library = make_answerer("vadar", session, data, accept=right_or_guessable,
                                        tries=settings.build_tries)
        names = {f.name for f in library}
        for question in todo:
            batch.on_event(f"writing a program for build question {question.question_id}")
            outcome = answer(question)
            record_build_program(store, batch.batch_id, question, outcome, is_right(question, outcome), names)
    batch.on_event("distilling helpers from the right build programs")
    return distill_helpers(session, data, batch.built_from, batch.batch_id, batch.on_event)


def is_right(question: Question, outcome: ProgramOutcome) -> bool:
    """A working program whose answer scores full marks against the question's label."""
    return outcome.error is None and score_answer(outcome.answer, question.answer, question.answer_type,
                                                  question.metric) >= 1.0


def right_or_guessable(question: Question, outcome: ProgramOutcome) -> bool:
    """Stop writing build programs: this one is right, or the answer is yes or no, which a wrong program
    gets right half the time, so trying again until right would store lucky programs as verified."""
    return is_right(question, outcome) or str(question.answer).strip().casefold() in ("yes", "no")


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
