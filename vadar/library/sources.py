"""What the bottom-up routes learn from: the right build programs, and the API's signatures.

Both distillation (`vadar.library.distill`) and group helpers (`vadar.library.clusters`) start
from one right program per build question, in its latest rewritten form, and read the API's
parameter names and types from the API text the LLM sees.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from api_store import ApiStore, FunctionRecord
from api_store.evidence import SceneCheck, VerifiedProgram
from omni3d_bench.types import Question
from vadar.library.gate import REWRITTEN
from vadar.programs.api_text import render_api
from vadar.programs.calls import helpers_called
from vadar.programs.outcome import ProgramOutcome


BUILD = "build"  # variant of a verified program written for distillation


def record_build_program(store: ApiStore, batch_id: int | None, question: Question, outcome: ProgramOutcome,
                         right: bool, library: Collection[str], other_scenes: SceneCheck | None = None) -> None:
    """Keep a program written for a build question, with the helpers of `library` it calls and what it
    gave on other scenes: the right ones are what the bottom-up routes learn from."""
    store.record_verified_program(
        batch_id=batch_id, question_id=question.question_id, question=question.question, variant=BUILD,
        code=outcome.program, answer=outcome.answer, gold=question.answer, error=outcome.error, correct=right,
        uses=helpers_called(outcome.program, library), other_scenes=other_scenes)


@dataclass
class DistillReport:
    """What one bottom-up pass admitted and rejected, and the build programs' tokens before and after."""

    admitted: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    programs: int = 0
    tokens_before: int = 0
    tokens_after: int = 0

    def merge(self, later: DistillReport) -> DistillReport:
        """This report followed by `later`, run on the programs this one left (tokens from first to last)."""
        return DistillReport(self.admitted + later.admitted, {**self.rejected, **later.rejected},
                             self.programs or later.programs, self.tokens_before or later.tokens_before,
                             later.tokens_after)


GUESSABLE = frozenset({"yes", "no", "true", "false"})


def success_weight(gold: object) -> float:
    """What one right answer says about a program: a yes/no answer is right half the time by chance,
    so it counts half as much as a right count, attribute or measure."""
    return 0.5 if str(gold).strip().casefold() in GUESSABLE else 1.0


def support(golds: Sequence[object]) -> float:
    """The evidence of several right answers, each weighed by `success_weight`."""
    return sum(success_weight(gold) for gold in golds)


def api_signatures(library: Sequence[FunctionRecord]) -> tuple[dict[str, list[tuple[str, str]]], dict[str, str]]:
    """Parameter (name, annotation) lists and return annotations of every API function, from the API text."""
    params: dict[str, list[tuple[str, str]]] = {}
    returns: dict[str, str] = {}
    for node in ast.parse(render_api(library)).body:
        if isinstance(node, ast.FunctionDef):
            params[node.name] = [(a.arg, ast.unparse(a.annotation) if a.annotation else "") for a in node.args.args]
            if node.returns is not None:
                returns[node.name] = ast.unparse(node.returns)
    return params, returns


def right_programs(store: ApiStore, questions: Sequence[Question]) -> tuple[dict[str, Question], list[VerifiedProgram]]:
    """`questions` by id, and the right program of each that calls only helpers still in the library."""
    by_id = {q.question_id: q for q in questions}
    implemented = {f.name for f in store.library()}
    return by_id, current_programs(store.verified_programs(correct_only=True), set(by_id), implemented)


def current_programs(programs: Sequence[VerifiedProgram], question_ids: set[str],
                     implemented: set[str]) -> list[VerifiedProgram]:
    """One right program per question of `question_ids`: its latest rewritten form, else the first written.

    Programs that call a helper no longer in the library (a rejected candidate) are left out.
    """
    chosen: dict[str, VerifiedProgram] = {}
    for program in programs:
        if program.question_id not in question_ids or not program.code or not program.correct:
            continue
        if not set(program.uses) <= implemented:
            continue
        if program.question_id not in chosen or program.variant == REWRITTEN:
            chosen[program.question_id] = program
    return list(chosen.values())
