"""The last step of a build: its own batches decide what of the library stays.

`build_api` hands over every built batch with its store id. Each batch's questions are answered by
static-api and by vadar with the library as it would be without that batch (its helpers, those that
call them, its questions' worked examples), or, in a one-batch build, with the whole library;
`vadar.library.validation` judges, and what loses significantly is retired (helpers) or withdrawn
(worked examples) with its figures, until vadar is no longer significantly behind there. The batches are build
questions already: no evaluation scores them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Question
from vadar.library.admission import majority, scorable_reference
from vadar.library.validation import (IN_SAMPLE, LEAVE_ONE_BATCH_OUT, Answered, ValidationRound, apply_round, judge,
                                     left_out, record_validated, withdraw)
from vadar.programs.api_text import render_api, with_regions
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.sampling import PROGRAM_SAMPLE
from vadar.programs.calls import helpers_called
from vadar.programs.question_context import QuestionContext
from vadar.runs.methods import (LibrarySnapshot, build_answerer, example_retriever, make_answerer, program_agent_for,
                                read_library)
from vadar.runs.prepare import PreparedData
from vadar.runs.session import Session

MAX_ROUNDS = 3  # rounds of withdrawing what loses; the last withdraws all but a kind no lost question used,
# and the round after it the rest, if still significantly behind


@dataclass(frozen=True)
class BuiltBatch:
    """One built batch as the gate leaves it out: its store id (which helpers it added) and questions."""

    batch_id: int
    questions: tuple[Question, ...]


@dataclass
class ValidationReport:
    """What the gate saw and did; `labelled` False: references are agreement between two samples;
    `rule`: leave-one-batch-out, or in-sample for a one-batch build."""

    labelled: bool
    questions: list[str]
    rule: str = LEAVE_ONE_BATCH_OUT
    batches: int = 0
    built: int = 0  # questions in the built batches; `questions` is the share the gate answered
    judged: int = 0  # questions with a reference
    static_answered: int = 0  # static-api programs written: with gold answers, only where vadar was wrong,
    # unless something was withdrawn (elsewhere it can at most tie, which changes no decision)
    rounds: list[ValidationRound] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rounds) and self.rounds[-1].passed

    @property
    def decision(self) -> str:
        """What the gate decided, in one line."""
        retired = [name for r in self.rounds for name in r.retired]
        examples = sum(len(r.withdrawn) for r in self.rounds)
        if any(r.everything for r in self.rounds):
            return "the whole library and its worked examples were withdrawn: vadar is static-api"
        if retired or examples:
            return (f"withdrawn: {', '.join(retired) or 'no helper'} and {examples} worked examples; "
                    f"{self._standing()}")
        if not self.judged:
            return "no question had a reference: nothing judged, the library stays"
        return f"{self._standing()}: the library stays"

    def _standing(self) -> str:
        last = self.rounds[-1]
        if not last.passed:
            return "vadar stays significantly behind static-api"
        if last.assumed:  # static-api's total is a bound there: only the questions it was asked on say anything
            return (f"vadar lost {last.lost} of the {last.questions - last.assumed} questions its programs got wrong "
                    f"to static-api, not significantly (one-sided sign test p {last.behind_p:.2f} > {last.level:g}; "
                    f"static-api not asked on the {last.assumed} vadar got right)")
        if last.vadar >= last.static:
            return "vadar is at least static-api"
        by = (f"{last.lost - last.won} questions" if last.lost > last.won
              else f"{last.static - last.vadar:.2g} points")
        return (f"vadar is behind static-api by {by}, not significantly "
                f"(one-sided sign test p {last.behind_p:.2f} > {last.level:g})")

    def answered_text(self) -> str:
        """How many build questions the gate answered and judged, of how many built."""
        built = max(self.built, len(self.questions))
        share = ("" if len(self.questions) == built
                 else f" ({len(self.questions)} answered, spread over the batches: library.validation_questions)")
        return f"{self.judged} of {built} build questions{share}"

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "batches": self.batches, "labelled": self.labelled, "built": self.built,
                "references": "gold answers" if self.labelled else "the answer two static-api programs agree on",
                "questions": self.questions, "judged": self.judged, "static_api_answered": self.static_answered,
                "decision": self.decision,
                "rounds": [r.to_dict() for r in self.rounds]}


def validate_library(session: Session, data: PreparedData, batches: Sequence[BuiltBatch],
                     on_event: Callable[[str], None] = lambda message: None) -> ValidationReport:
    """Answer the built batches' questions (at most `library.validation_questions`, spread over the
    batches) with both methods; withdraw what loses until vadar is not behind."""
    built = sum(len(batch.questions) for batch in batches)
    batches = spread_over_batches(batches, session.config.library.validation_questions)
    questions = [q for batch in batches for q in batch.questions]
    labelled = session.config.library.admission == "labelled" and all(q.answer is not None for q in questions)
    report = ValidationReport(labelled, [q.question_id for q in questions],
                              LEAVE_ONE_BATCH_OUT if len(batches) > 1 else IN_SAMPLE, len(batches), built)
    static_answer, _ = make_answerer("static-api", session, data)
    references: dict[str, str | None] = {}
    static = _StaticArm(static_answer, references, labelled, on_event)
    for question in questions:
        if labelled:  # gold answers: static-api is asked only where it could change a decision
            references[question.question_id] = str(question.answer)
        else:
            agreed = majority([static.outcome(question), _sampled(session, data, question)])
            references[question.question_id] = scorable_reference(agreed, question)
    judged = [BuiltBatch(b.batch_id, tuple(q for q in b.questions if references[q.question_id] is not None))
              for b in batches]
    report.judged = sum(len(b.questions) for b in judged)
    level = session.config.library.withdraw_p
    for index in range(MAX_ROUNDS + 1):
        answered = _vadar_round(session, data, judged, static.score, references, on_event, index,
                                leave_out=report.rule == LEAVE_ONE_BATCH_OUT)
        round_ = judge(answered, level, assumed=len(static.assumed))
        snapshot = read_library(session.store, "vadar")
        if not (snapshot.functions or snapshot.examples) or (index == MAX_ROUNDS and round_.passed):
            report.rounds.append(round_)
            break
        # the last round of withdrawing may not end significantly behind: then all goes but a kind no
        # lost question used; still behind after that, the rest goes too, unjudged (static-api's prompts)
        library = ([f.name for f in snapshot.functions], [p.id for p in snapshot.examples])
        last = {"everything": index == MAX_ROUNDS - 1, "whole": index == MAX_ROUNDS}
        decided = withdraw(round_, *library, **last)
        if decided and static.assumed:
            # an assumed tie only hides a win of vadar: with static-api's real answers nothing would be
            # withdrawn either, so it is asked there only when something would be, and the round judged again
            round_ = judge(static.exact(answered, questions), level)
            decided = withdraw(round_, *library, **last)
        report.rounds.append(round_)
        if not decided:
            break
        apply_round(session.store, round_)
        if index == MAX_ROUNDS:
            break
    report.static_answered = len(static.outcomes)
    if report.rounds:
        kept = [f.name for f in read_library(session.store, "vadar").functions]
        record_validated(session.store, report.rounds[-1], kept)
    return report


@dataclass
class _StaticArm:
    """static-api's side of the gate, asked lazily. With gold answers, a question vadar's program gets
    right is scored a tie unasked (static-api can at most tie there): only a win of vadar can hide in
    it, which withdraws nothing, so `exact` asks static-api there only when a round would withdraw.
    In a 100-question CLEVR build vadar was wrong on 12 of the gate's 30 questions."""

    answer: Callable[[Question], ProgramOutcome]
    references: dict[str, str | None]
    labelled: bool
    on_event: Callable[[str], None]
    outcomes: dict[str, ProgramOutcome] = field(default_factory=dict)
    assumed: set[str] = field(default_factory=set)  # questions scored a tie, unasked

    def outcome(self, question: Question) -> ProgramOutcome:
        if question.question_id not in self.outcomes:
            self.on_event(f"validation: static-api on question {question.question_id}")
            self.outcomes[question.question_id] = self.answer(question)
        return self.outcomes[question.question_id]

    def score(self, question: Question, vadar: float) -> float:
        if self.labelled and vadar >= 1.0 and question.question_id not in self.outcomes:
            self.assumed.add(question.question_id)
            return vadar
        return _score(self.outcome(question), self.references[question.question_id], question)

    def exact(self, answered: Sequence[Answered], questions: Sequence[Question]) -> list[Answered]:
        """`answered` with static-api's real score where a tie was assumed."""
        by_id = {q.question_id: q for q in questions}
        real = [a if a.question_id not in self.assumed else dataclasses.replace(
                    a, static=_score(self.outcome(by_id[a.question_id]), self.references[a.question_id],
                                     by_id[a.question_id]))
                for a in answered]
        self.assumed.clear()
        return real


def spread_over_batches(batches: Sequence[BuiltBatch], limit: int) -> list[BuiltBatch]:
    """At most `limit` questions (0: all), as even a share of every batch as the sizes allow, each
    batch's picked evenly along it: every batch is still left out once, on fewer questions."""
    total = sum(len(batch.questions) for batch in batches)
    if not limit or total <= limit:
        return list(batches)
    shares = [0] * len(batches)
    for _ in range(limit):  # one question at a time to the open batch with the smallest share taken so far
        open_ = [i for i, batch in enumerate(batches) if shares[i] < len(batch.questions)]
        shares[min(open_, key=lambda i: (shares[i] / len(batches[i].questions), i))] += 1
    return [BuiltBatch(batch.batch_id, _evenly(batch.questions, share))
            for batch, share in zip(batches, shares, strict=True) if share]


def _evenly(questions: Sequence[Question], count: int) -> tuple[Question, ...]:
    """`count` of `questions` at evenly spaced positions (the middle of each of `count` equal stretches)."""
    return tuple(questions[int((index + 0.5) * len(questions) / count)] for index in range(count))


def without_batch(snapshot: LibrarySnapshot, batch: BuiltBatch) -> LibrarySnapshot:
    """The library as it would be had `batch` never run: none of the helpers it implemented (nor
    their callers), none of its questions' worked examples."""
    asked = {q.question_id for q in batch.questions}
    added = [f.name for f in snapshot.functions if f.batch_id == batch.batch_id]
    return LibrarySnapshot(left_out(snapshot.functions, added),
                           [p for p in snapshot.examples if p.batch_id != batch.batch_id and p.question_id not in asked])


def _sampled(session: Session, data: PreparedData, question: Question) -> ProgramOutcome:
    """A second static-api program, sampled warmer: its agreement with the first is the reference."""
    agent = program_agent_for(session.config, session.llm, session.executor, sampling=PROGRAM_SAMPLE)
    context = QuestionContext(data.dataset, data.modules, data.view_modules)
    api = render_api([], **context.api_options(question))
    return agent.solve(question.question, with_regions(api, question.regions), context.namespace(question))


def _vadar_round(session: Session, data: PreparedData, batches: Sequence[BuiltBatch],
                 static_score: Callable[[Question, float], float], references: dict[str, str | None],
                 on_event: Callable[[str], None], index: int, *, leave_out: bool) -> list[Answered]:
    whole = read_library(session.store, "vadar")
    answered = []
    for batch in batches:
        snapshot = without_batch(whole, batch) if leave_out else whole
        answer = build_answerer("vadar", snapshot, llm=session.llm, executor=session.executor, config=session.config,
                                dataset=data.dataset, modules=data.modules, backends=data.backends,
                                view_modules=data.view_modules)
        examples = example_retriever(snapshot, session.config)
        names = {f.name for f in snapshot.functions}
        for question in batch.questions:
            on_event(f"validation round {index + 1}: vadar on question {question.question_id}")
            outcome = answer(question)
            score = _score(outcome, references[question.question_id], question)
            answered.append(Answered(
                question.question_id, score, static_score(question, score),
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
