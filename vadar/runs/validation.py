"""The last step of a build: held-back build questions decide what of the library stays.

`build_api` keeps back `library.validation_share` of its questions (when that is at least
`library.validation_min` questions). They are recorded as build questions, so no evaluation ever
scores them, and no batch sees them. Once the batches are built, static-api and vadar answer them
and `vadar.library.validation` judges; what loses is retired (helpers) or withdrawn (worked
examples) with its figures, until vadar is at least static-api there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Question
from vadar.config import LibraryConfig
from vadar.library.admission import majority, scorable_reference
from vadar.library.validation import Answered, ValidationRound, apply_round, judge, record_validated, withdraw
from vadar.programs.api_text import render_api, with_regions
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.sampling import PROGRAM_SAMPLE
from vadar.programs.calls import helpers_called
from vadar.runs.methods import example_retriever, make_answerer, program_agent_for, question_context, read_library
from vadar.runs.prepare import PreparedData
from vadar.runs.session import Session

MAX_ROUNDS = 3  # rounds of withdrawing what loses; the last withdraws everything if still behind


@dataclass
class ValidationReport:
    """What the gate saw and did; `labelled` False: references are agreement between two samples."""

    labelled: bool
    questions: list[str]
    judged: int = 0  # questions with a reference
    rounds: list[ValidationRound] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rounds) and self.rounds[-1].passed

    def to_dict(self) -> dict[str, Any]:
        return {"labelled": self.labelled, "references": "gold answers" if self.labelled else
                "the answer two static-api programs agree on", "questions": self.questions, "judged": self.judged,
                "rounds": [r.to_dict() for r in self.rounds]}


def held_back(count: int, settings: LibraryConfig) -> int:
    """How many of `count` build questions the validation gate keeps back (0: too few to judge)."""
    kept = round(count * settings.validation_share)
    return kept if kept >= settings.validation_min else 0


def validate_library(session: Session, data: PreparedData, questions: Sequence[Question],
                     on_event: Callable[[str], None] = lambda message: None) -> ValidationReport:
    """Answer the held-back `questions` with both methods; withdraw what loses until vadar is not behind."""
    labelled = session.config.library.admission == "labelled" and all(q.answer is not None for q in questions)
    report = ValidationReport(labelled, [q.question_id for q in questions])
    static_answer, _ = make_answerer("static-api", session, data)
    static: dict[str, ProgramOutcome] = {}
    references: dict[str, str | None] = {}
    for question in questions:
        on_event(f"validation: static-api on question {question.question_id}")
        static[question.question_id] = static_answer(question)
        agreed = None if labelled else majority([static[question.question_id], _sampled(session, data, question)])
        references[question.question_id] = str(question.answer) if labelled else scorable_reference(agreed, question)
    judged = [q for q in questions if references[q.question_id] is not None]
    report.judged = len(judged)
    for index in range(MAX_ROUNDS + 1):
        round_ = judge(_vadar_round(session, data, judged, static, references, on_event, index))
        report.rounds.append(round_)
        snapshot = read_library(session.store, "vadar")
        if round_.passed or index == MAX_ROUNDS or not (snapshot.functions or snapshot.examples):
            break
        # the last round of withdrawing may not end behind: then everything goes, and vadar is static-api
        withdraw(round_, [f.name for f in snapshot.functions], [p.id for p in snapshot.examples],
                 everything=index == MAX_ROUNDS - 1)
        apply_round(session.store, round_)
    if report.rounds:
        kept = [f.name for f in read_library(session.store, "vadar").functions]
        record_validated(session.store, report.rounds[-1], kept)
    return report


def _sampled(session: Session, data: PreparedData, question: Question) -> ProgramOutcome:
    """A second static-api program, sampled warmer: its agreement with the first is the reference."""
    agent = program_agent_for(session.config, session.llm, session.executor, sampling=PROGRAM_SAMPLE)
    namespace, api = question_context(question, data.dataset, data.modules, data.view_modules)
    return agent.solve(question.question, with_regions(render_api([], **api), question.regions), namespace)


def _vadar_round(session: Session, data: PreparedData, questions: Sequence[Question],
                 static: dict[str, ProgramOutcome], references: dict[str, str | None],
                 on_event: Callable[[str], None], index: int) -> list[Answered]:
    snapshot = read_library(session.store, "vadar")
    answer, library = make_answerer("vadar", session, data)
    examples = example_retriever(snapshot, session.config)
    names = {f.name for f in library}
    answered = []
    for question in questions:
        on_event(f"validation round {index + 1}: vadar on question {question.question_id}")
        outcome = answer(question)
        reference = references[question.question_id]
        answered.append(Answered(
            question.question_id, _score(outcome, reference, question), _score(static[question.question_id],
                                                                                reference, question),
            frozenset(helpers_called(outcome.program, names)),
            frozenset(p.id for p in examples.select(question.question)) if examples is not None else frozenset()))
    return answered


def _score(outcome: ProgramOutcome, reference: str | None, question: Question) -> float:
    if reference is None or outcome.error is not None:
        return 0.0
    try:
        return score_answer(outcome.answer, reference, question.answer_type, question.metric)
    except ValueError:  # a reference the metric cannot read scores nothing, for either method
        return 0.0
