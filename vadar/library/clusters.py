"""Helpers written for groups of similar questions, admitted by reproduction.

The statement runs that right programs share are small (find an object, take its depth); the
helpers worth having (count the objects left of X, the colour of the thing of the same size as X)
show up as groups of similar questions whose programs differ in shape. So questions are grouped by
their *frame*: the question's words with the phrases its right program passed to the API masked.
For a group of at least `min_uses` questions, the LLM sees two of the right programs and writes
one parameterised helper plus a one-line call of it for every question of the group; then, in a
request of its own, one call for each build question of the same frame whose program was wrong.
The helper is admitted only if every call reproduces its question's right answer in the sandbox,
it is right on at least two thirds of those other questions of its frame (a helper that computes what the frame asks answers them too;
one that reproduced lucky yes/no answers does not), the helper
calls the API and never tests its parameters against the group's own phrases (no lookup table of
answers), and it passes the ground-truth checks its name invites. A helper whose code passes but
whose docstring says nothing of a parameter is asked for a new docstring alone (docstrings.py). The one-line programs are
stored as worked examples, so the Program agent sees the helper in use. A refused group is
remembered in the store and asked for again only once `min_uses` questions it never saw have joined it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from api_store import ApiStore, FunctionRecord
from api_store.evidence import VerifiedProgram
from base_modules.module import ModuleSet
from omni3d_bench.types import Dataset, Question
from vadar import prompts
from vadar.library.candidates import Candidate, Evidence, Route, Use, route_of
from vadar.library.docstrings import redocument
from vadar.library.drafting import helper_source
from vadar.library.fragments import code_tokens, helper_body, library_twins
from vadar.library.frames import frame_questions, group_programs, question_frame
from vadar.library.gate import Gate, Reproduces, SaysWhatItFixes, TruthCheck, admit, scored_right, source_rule
from vadar.library.group_replies import Written, calls_of, misuse, parse_reply
from vadar.library.problems import (CoverageProblem, DocstringProblem, Duplicate, NotShorter, Problem, ReplyProblem,
                                    WrongOnFrame)
from vadar.library.shape_helpers import answered_by, is_catalogue_helper
from vadar.library.sources import DistillReport, api_signatures, right_programs, support
from vadar.library.truth_checks import TruthChecks
from vadar.llm.chat import ChatModel, Message, Role
from vadar.programs.api_text import render_api
from vadar.programs.namespace import program_namespace
from vadar.programs.outcome import Executor, run_program
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import Reply, StepLoop, Verdict

WRITING = Sampling(max_tokens=500)
MAX_SHOWN = 2  # right programs shown to the LLM per group
MAX_GROUP = 8  # questions of one group the helper must answer (the first ones)
MAX_OTHERS = 6  # build questions of the group's frame without a right program, answered as a check
FRAME_MIN_RIGHT = 2 / 3  # of those, the share the helper must answer right


@dataclass
class _Attempt:
    """The last judged reply of a group request: its helper as a candidate and what is wrong with it."""

    name: str = "(unnamed)"
    problem: Problem | None = None
    candidate: Candidate | None = None
    judged: bool = False  # a reply got past parsing, or one was refused for its form


class GroupWriter:
    """Groups the right build programs by question frame and has the LLM write one helper per group."""

    def __init__(self, store: ApiStore, llm: ChatModel, executor: Executor, *, min_uses: int = 3,
                 max_helpers: int = 3, truth: TruthChecks | None = None,
                 attempts: int = 2, on_event: Callable[[str], None] | None = None) -> None:
        self.store, self.executor = store, executor
        self.loop = StepLoop(llm, WRITING, attempts, role=Role.GROUP_WRITE)
        self.min_uses, self.max_helpers, self.truth = min_uses, max_helpers, truth
        self.on_event = on_event or (lambda message: None)

    def write(self, dataset: Dataset, modules: ModuleSet, questions: Sequence[Question],
              batch_id: int | None = None) -> DistillReport:
        by_id, sources = right_programs(self.store, questions)
        report = DistillReport(programs=len(sources))
        report.tokens_before = report.tokens_after = sum(code_tokens(p.code or "") for p in sources)
        # a group whose helper was admitted once and has since been retired is not written again
        tried = {tuple(e.get("questions", ())) for d in self.store.decisions()
                 if route_of(e := d.evidence or {}) is Route.GROUP}
        refused = [frozenset(a.question_ids) for a in self.store.group_attempts()]
        right = {p.question_id for p in sources}
        codes: dict[str, str] = {}
        for program in self.store.verified_programs():
            if program.code and program.question_id in by_id:
                codes.setdefault(program.question_id, program.code)
        unanswered = [q for q in questions if q.question_id not in right]
        for group in group_programs(self._ungrouped(sources, self.store.library())):
            if len(report.admitted) >= self.max_helpers:
                break
            if support([p.gold for p in group]) < self.min_uses:  # groups are by size: a smaller one may weigh more
                continue
            group = group[:MAX_GROUP]
            ids = tuple(p.question_id for p in group)
            if ids in tried:
                continue
            if asked_before(ids, refused, self.min_uses):
                self.on_event(f"group of {len(ids)} questions not asked again: refused before, "
                              f"fewer than {self.min_uses} questions new since")
                continue
            library = self.store.library()
            anchor = question_frame(group[0].question, group[0].code or "")
            others = frame_questions(anchor, unanswered, codes)[:MAX_OTHERS]
            name, reason, saved = self._write_one(group, others, by_id, dataset, modules, library, batch_id)
            if reason is not None:
                report.rejected[name] = reason
                self.store.record_group_attempt(batch_id=batch_id, frame=" ".join(anchor), question_ids=ids,
                                                name=name, reason=reason)
                self.on_event(f"group helper {name} not admitted: {reason}")
                continue
            report.admitted.append(name)
            report.tokens_after -= saved
            self.on_event(f"admitted group helper {name} ({len(group)} questions, {saved} tokens saved)")
        return report

    def _ungrouped(self, sources: list[VerifiedProgram], library: list[FunctionRecord]) -> list[VerifiedProgram]:
        """The right programs a group helper could still shorten: not one call of a library function, nor
        for a question an admitted question-shape helper answers in one call (`answered_by`), whose
        programs are shown that call. A 100-question CLEVR build asked twice (3 minutes) for a helper of
        questions `_attribute_of_same` answered, and was given its docstring back and no body."""
        shapes = {f.name for f in library if is_catalogue_helper(f)}
        kept, answered = [], Counter()
        for program in sources:
            whole = answered_by(program.question, shapes)
            if whole is not None:
                answered[whole] += 1
            elif not _one_call(program):
                kept.append(program)
        for name, count in answered.items():
            self.on_event(f"{count} right program(s) not grouped: `{name}` answers their questions in one call")
        return kept

    def _write_one(self, group: list[VerifiedProgram], others: list[Question], by_id: dict[str, Question],
                   dataset: Dataset, modules: ModuleSet, library: list[FunctionRecord],
                   batch_id: int | None) -> tuple[str, str | None, int]:
        api_params = api_signatures(library)[0]
        taken = {f.name for f in self.store.functions(include_failed=True)} | set(api_params)
        system = {"role": "system", "content": prompts.render("group_system", api=render_api(library))}
        messages = [system, {"role": "user", "content": prompts.render(
            "group_request", shown=group[:MAX_SHOWN], questions=[p.question for p in group])}]
        numbered = {p.question_id: number for number, p in enumerate(group, 1)}
        gate = Gate([source_rule, SaysWhatItFixes(library),
                     Reproduces(self.executor, by_id, dataset, modules, library, numbered),
                     TruthCheck(self.truth, dataset, modules, library, list(by_id.values())),
                     FrameCheck(self, others, system, dataset, modules, library)])
        attempt = _Attempt()

        def judge(reply: Reply) -> Verdict:
            try:
                written = parse_reply(reply.text, len(group), taken)
            except ValueError as exc:
                if not attempt.judged:
                    attempt.problem, attempt.judged = ReplyProblem(str(exc)), True
                return Verdict.retry(prompts.render("group_retry", error=str(exc)))
            attempt.name, attempt.judged = written.name, True
            attempt.problem = duplicate_of(written, library, set(api_params))
            if attempt.problem is not None:
                attempt.candidate = None  # nor an earlier reply's helper, kept for some of the questions
                return Verdict.give_up()  # the library does it already: no other reply can add it
            attempt.problem = self._judge(written, group, api_params, gate, system, attempt)
            if attempt.problem is None:
                return Verdict.accept()
            return Verdict.retry(prompts.render("group_retry", error=attempt.problem.for_llm,
                                                changed=attempt.problem.answers_changed))

        self.loop.run(messages, judge)
        problem = attempt.problem if attempt.judged else ReplyProblem("no usable reply")
        if problem is not None:
            kept = self._keep_the_questions_it_answers(attempt.candidate, group, by_id, dataset, modules, library)
            if kept is None:
                return attempt.name, problem.log, 0
            attempt.candidate = kept
        candidate = attempt.candidate
        assert candidate is not None
        saved = sum(code_tokens(use.source.code or "") - code_tokens(use.code) for use in candidate.uses)
        if saved <= 0:
            return candidate.name, NotShorter("the calls are not shorter than the programs they replace").log, 0
        evidence = candidate.evidence
        evidence.questions = [use.source.question_id for use in candidate.uses]
        evidence.uses, evidence.tokens_saved = len(candidate.uses), saved
        evidence.frame = " ".join(question_frame(group[0].question, group[0].code or ""))
        admit(self.store, candidate, library=library, batch_id=batch_id, mode="distilled")
        return candidate.name, None, saved

    def _judge(self, written: Written, group: list[VerifiedProgram], api_params: dict[str, list[tuple[str, str]]],
               gate: Gate, system: Message, attempt: _Attempt) -> Problem | None:
        """What is wrong with a parsed reply; its helper becomes the attempt's candidate once it calls the API."""
        problem = misuse(written, api_params)
        uses = [Use(p, f"final_result = {call}\n") for p, call in zip(group, written.calls, strict=True) if call]
        misfits = [p.question_id for p, call in zip(group, written.calls, strict=True) if not call]
        if problem is None and misfits and (support([u.source.gold for u in uses]) < self.min_uses
                                            or 3 * len(uses) < 2 * len(group)):
            problem = CoverageProblem(f"the helper is called for only {len(uses)} of the {len(group)} questions: "
                                      "make what the others differ in a parameter, and call it on every line")
        if problem is not None:
            return problem
        candidate = Candidate(Route.GROUP, written.name, written.signature, written.docstring, written.code, uses)
        problem = gate.first_problem(candidate)
        if problem is None and written.silent:
            problem, candidate = self._redocument(written, candidate, system)
        if misfits:
            candidate.evidence.left_out = misfits
        attempt.candidate = candidate
        return problem

    def _redocument(self, written: Written, candidate: Candidate,
                    system: Message) -> tuple[Problem | None, Candidate]:
        """Right code with a docstring silent on a parameter: ask for the docstring alone."""
        parameters = [a.arg for a in ast.parse(written.code).body[0].args.args]  # type: ignore[attr-defined]
        docstring = redocument(self.loop.llm, system, written.code, written.name, parameters,
                               written.silent or "")
        if docstring is None:
            return DocstringProblem(written.silent or ""), candidate
        candidate.evidence.docstring_rewritten_from = written.docstring
        body = written.code.split("\n", 2)[2]  # after the `def` line and the docstring line of `helper_source`
        return None, dataclasses.replace(candidate, docstring=docstring,
                                         code=helper_source(written.name, written.signature, docstring, body))

    def _keep_the_questions_it_answers(self, candidate: Candidate | None, group: list[VerifiedProgram],
                                       by_id: dict[str, Question], dataset: Dataset, modules: ModuleSet,
                                       library: list[FunctionRecord]) -> Candidate | None:
        """A helper right on most of its group is kept for the questions it answers right.

        A question can land in a group it does not fit (its object is described by a relation the
        helper's phrase parameter cannot carry). The helper is kept when the questions it answers
        right are at least `min_uses` and two thirds of the group; it is checked again on them
        alone, and the others are recorded as left out. Returns the kept candidate, or None.
        """
        if candidate is None:
            return None
        changed = set(candidate.evidence.changed or ())
        kept = [use for use in candidate.uses if use.source.question_id not in changed]
        if not changed or support([u.source.gold for u in kept]) < self.min_uses or 3 * len(kept) < 2 * len(group):
            return None
        again = dataclasses.replace(candidate, uses=kept, evidence=Evidence())
        gate = Gate([source_rule, Reproduces(self.executor, by_id, dataset, modules, library),
                     TruthCheck(self.truth, dataset, modules, library, list(by_id.values()))])
        if gate.first_problem(again) is not None:
            return None
        again.evidence.left_out = sorted(changed | set(candidate.evidence.left_out or ()))
        return again


class FrameCheck:
    """The helper on the frame's build questions that no right program answered, against gold.

    Asked in a request of its own, after the helper reproduced its group, so the group request
    stays as short as before. A reply that gives no usable call per question is no evidence.
    """

    def __init__(self, writer: GroupWriter, others: list[Question], system: Message, dataset: Dataset,
                 modules: ModuleSet, library: list[FunctionRecord]) -> None:
        self.writer, self.others, self.system = writer, others, system
        self.dataset, self.modules, self.library = dataset, modules, library

    def __call__(self, candidate: Candidate) -> Problem | None:
        if not self.others:
            return None
        calls: list[str | None] = []

        def judge(reply: Reply) -> Verdict:
            try:
                calls[:] = calls_of(reply.text, candidate.name, len(self.others))
            except ValueError as exc:
                return Verdict.retry(prompts.render("group_retry", error=str(exc)))
            return Verdict.accept()

        request = prompts.render("group_frame", helper=candidate.code, name=candidate.name,
                                 questions=[q.question for q in self.others])
        loop = self.writer.loop
        StepLoop(loop.llm, WRITING, 2, role=Role.GROUP_FRAME).run(
            [self.system, {"role": "user", "content": request}], judge)
        fitting = [(q, call) for q, call in zip(self.others, calls, strict=True) if call] if calls else []
        if not fitting:
            candidate.evidence.frame_check = {"questions": len(self.others) if not calls else 0, "right": None}
            return None
        functions = [*self.library, candidate]
        wrong: list[str] = []
        for question, call in fitting:
            namespace = program_namespace(self.dataset.image(question), self.modules, functions, question.regions)
            run = run_program(self.writer.executor, f"final_result = {call}\n", namespace)
            if run.error is not None:
                wrong.append(f"{question.question!r}: {run.error.splitlines()[-1]}")
            elif not scored_right(run, question.answer, question):
                wrong.append(f"{question.question!r}: it answered {run.result.value!r}, which is wrong")
        candidate.evidence.frame_check = {"questions": len(fitting), "right": len(fitting) - len(wrong)}
        if len(fitting) - len(wrong) >= FRAME_MIN_RIGHT * len(fitting):
            return None
        return WrongOnFrame(f"on {len(wrong)} of {len(fitting)} other questions of this kind the helper is wrong: "
                            f"{wrong[0]}")


def duplicate_of(written: Written, library: Sequence[FunctionRecord], api_names: set[str]) -> Duplicate | None:
    """A group helper the library has already (`fragments.library_twins`): programs should call that one."""
    body = helper_body(written.code)
    twin = library_twins(library, api_names)(body) if body is not None else None
    if twin is None:
        return None
    return Duplicate(f"`{twin}` in the library already does this: call it", f"the body of `{twin}`, which the library has")


def asked_before(ids: Sequence[str], refused: Sequence[frozenset[str]], min_new: int) -> bool:
    """A group refused before, grown by fewer than `min_new` questions since: asking again repeats the refusal.

    A refused group returns in the next batch with a question or two more, so its request differs;
    in a 100-question CLEVR build one group was refused in three batches running for the same reason.
    A group with `min_new` questions the refused request never saw is new evidence and is asked.
    """
    asked = set(ids)
    return any(earlier & asked and len(asked - earlier) < min_new for earlier in refused)


def _one_call(program: VerifiedProgram) -> bool:
    """A program that is one call of a library function: its question's group has a helper already."""
    return bool(program.uses) and len((program.code or "").strip().splitlines()) == 1
