"""Distil helpers from programs that were right: bottom-up, admitted by reproduction.

Top-down proposals by a small model give helpers that are wrong or unused. Here the library grows
from what already worked: the right programs written on build questions (one per question, in its
latest rewritten form) are searched for statement runs that recur across at least `min_uses`
questions up to names and literals (`vadar.library.fragments`). The best pattern (most tokens
saved) becomes a candidate helper; the LLM only names it and writes its docstring from its body
and two of its uses (AutoDoc). It is admitted only if every program it came from, rewritten to
call it, still gives its right answer in the sandbox, it shortens them, and it passes the
ground-truth property checks its name invites. The rewritten programs are stored as verified
programs, so retrieved worked examples show the helper in use, and the next pattern is searched
in them: helpers can build on helpers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from api_store import ApiStore, FunctionRecord, FunctionStatus
from api_store.evidence import VerifiedProgram
from base_modules.module import ModuleSet
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Dataset, Question
from vadar import prompts
from vadar.programs.answers import normalize_answer
from vadar.programs.api_text import render_api
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.programs.helper_rules import name_problem
from vadar.programs.outcome import Executor, check_infrastructure
from vadar.agents.program import program_error
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import Reply, StepLoop, Verdict
from vadar.library.drafting import (HelperDraft, body_shape, draft_helper, helper_body, rewrite, silent_parameter,
                                    with_formula)
from vadar.library.example_values import documents_an_example, example_words, names_an_example, parameter_words
from vadar.library.fragments import Pattern, code_tokens, find_patterns
from vadar.programs.namespace import program_namespace
from vadar.library.truth_checks import TruthChecks
from vadar.llm.chat import ChatModel
from vadar.sandbox import LibrarySourceError, check_library_source

NAMING = Sampling(max_tokens=120)
PLACEHOLDER = "_UNNAMED"  # not a valid name: a reply that copies it is asked again
REWRITTEN = "rewritten"  # variant of a verified program that is a rewritten source program
_NAME = re.compile(r"^_[a-z][a-z0-9_]{2,40}$")


@dataclass
class Candidate:
    """A pattern drafted as a helper, with the outcome of its checks."""

    name: str
    docstring: str
    draft: HelperDraft
    pattern: Pattern
    questions: list[str]
    tokens_saved: int
    rewritten: dict[int, str] = field(default_factory=dict)
    reason: str | None = None  # why it was not admitted
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return self.draft.source(self.name, self.docstring)


@dataclass
class DistillReport:
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


class Distiller:
    """Finds, names, checks and admits helpers distilled from the store's right programs."""

    def __init__(self, store: ApiStore, llm: ChatModel, executor: Executor, *, min_uses: int = 3,
                 max_helpers: int = 3, truth: TruthChecks | None = None, max_reply_tokens: int | None = None,
                 on_event: Callable[[str], None] | None = None) -> None:
        self.store, self.executor = store, executor
        self.loop = StepLoop(llm, NAMING, 2, max_reply_tokens)
        self.min_uses, self.max_helpers = min_uses, max_helpers
        self.truth = truth
        self.on_event = on_event or (lambda message: None)

    def distill(self, dataset: Dataset, modules: ModuleSet, questions: Sequence[Question],
                batch_id: int | None = None) -> DistillReport:
        by_id, sources = right_programs(self.store, questions)
        report = DistillReport(programs=len(sources))
        codes = [p.code or "" for p in sources]
        report.tokens_before = sum(code_tokens(c) for c in codes)
        tried: set[str] = set()
        while len(report.admitted) < self.max_helpers:
            library = self.store.functions(FunctionStatus.IMPLEMENTED)
            candidate = self._best_candidate(codes, sources, library, tried)
            if candidate is None:
                break
            tried.add(candidate.pattern.shape)
            self._name(candidate, codes, library, self._claim_check(candidate, library, dataset, modules, questions))
            if candidate.reason is None:
                self._verify(candidate, [sources[i] for i in candidate.rewritten], by_id, dataset, modules, library)
            if candidate.reason is not None:
                report.rejected[candidate.name] = candidate.reason
                self.on_event(f"distilled candidate {candidate.name} not admitted: {candidate.reason}")
                continue
            self._admit(candidate, sources, library, batch_id)
            for index, code in candidate.rewritten.items():
                codes[index] = code
            report.admitted.append(candidate.name)
            self.on_event(f"admitted distilled helper {candidate.name} (used by {len(candidate.questions)} "
                          f"questions, {candidate.tokens_saved} tokens saved)")
        report.tokens_after = sum(code_tokens(c) for c in codes)
        return report

    # ----------------------------------------------------------------- finding

    def _best_candidate(self, codes: list[str], sources: list[VerifiedProgram], library: list[FunctionRecord],
                        tried: set[str]) -> Candidate | None:
        params, returns = api_signatures(library)
        # a body the library already has is no new helper (`_area` found again under another name)
        known = {body_shape(helper_body(f.code) or "", set(params)) for f in library if f.code} - {None}
        ranked = []
        for pattern in find_patterns(codes, set(params), min_programs=self.min_uses):
            if pattern.shape in tried or len({sources[i].question_id for i in pattern.programs}) < self.min_uses:
                continue
            draft = draft_helper(pattern, params, returns)
            if body_shape(draft.body, set(params)) in known:
                continue
            rewritten = rewrite(codes, pattern, "_h", draft)
            saved = sum(code_tokens(codes[i]) - code_tokens(rewritten[i]) for i in rewritten)
            if saved > 0:
                ranked.append((saved, -len(pattern.shape), pattern, draft))
        if not ranked:
            return None
        saved, _, pattern, draft = max(ranked, key=lambda r: (r[0], r[1]))
        questions = sorted({sources[i].question_id for i in pattern.programs})
        return Candidate("_h", "", draft, pattern, questions, saved)

    # ----------------------------------------------------------------- naming (AutoDoc)

    def _claim_check(self, candidate: Candidate, library: list[FunctionRecord], dataset: Dataset,
                     modules: ModuleSet, questions: Sequence[Question]) -> Callable[[str, str], str | None]:
        """What is wrong with a name for this body: the claim it makes fails against ground truth.

        The same body can be a good helper under an honest name (`_pixel_height`) and a harmful one
        under a false one (`_height_of_object` returning pixels), so a failing claim asks for another
        name, with the failure, rather than rejecting the body.
        """
        def problem(name: str, docstring: str) -> str | None:
            if self.truth is None:
                return None
            record = helper_record(name, candidate.draft.signature(), docstring,
                                   candidate.draft.source(name, docstring))
            checked = self.truth.check(record, [*library, record], dataset, modules, questions)
            if checked.passed is not False:
                return None
            return (f"the name `{name}` claims something this body does not compute: {checked.failures[0]}. "
                    "Name what it does compute")
        return problem

    def _name(self, candidate: Candidate, codes: list[str], library: list[FunctionRecord],
              claim_problem: Callable[[str, str], str | None] = lambda name, docstring: None) -> None:
        placeholder = PLACEHOLDER
        # the whole pattern decides which literals are arguments: rewritten alone, one instance has none
        calling = rewrite(codes, candidate.pattern, placeholder, candidate.draft)
        uses = [(instance.source, calling[instance.program])
                for instance in _distinct_programs(candidate.pattern)[:2]]
        messages = [{"role": "system", "content": prompts.render("distill_system")},
                    {"role": "user", "content": prompts.render(
                        "distill_request", helper=candidate.draft.source(placeholder, "..."), uses=uses,
                        parameters=[p for p in candidate.draft.parameters if p != "image"])}]
        taken = {f.name for f in self.store.functions(include_failed=True)} | set(api_signatures(library)[0])
        examples = example_words(candidate.pattern)
        named: list[tuple[str, str]] = []
        problems: list[str] = []

        def judge(reply: Reply) -> Verdict:
            try:
                name, docstring = _parse_stub(extract_code(reply.text))
            except (NoCodeError, ValueError) as exc:
                problems.append(str(exc))
                return Verdict.retry(prompts.render("distill_retry", error=str(exc)))
            docstring = with_formula(docstring, candidate.draft)
            problem = self._name_problem(name, taken) or names_an_example(name, examples) or \
                documents_an_example(docstring, examples - parameter_words(candidate.draft.parameters)) or \
                (silent_parameter(candidate.draft.parameters, docstring) if docstring
                 else "write a one-sentence docstring") or claim_problem(name, docstring)
            if problem:
                problems.append(problem)
                return Verdict.retry(prompts.render("distill_retry", error=problem))
            named.append((name, docstring))
            return Verdict.accept()

        self.loop.run(messages, judge)
        if not named:  # a name that says nothing helps no program: the candidate is not admitted
            candidate.name = _fallback_name(candidate.draft, taken)
            candidate.reason = "the LLM gave it no usable name" + (f" ({problems[-1]})" if problems else "")
            return
        candidate.name, candidate.docstring = named[0]
        candidate.rewritten = rewrite(codes, candidate.pattern, candidate.name, candidate.draft)

    def _name_problem(self, name: str, taken: set[str]) -> str | None:
        if name == PLACEHOLDER:
            return f"`{PLACEHOLDER}` is the placeholder: give the helper a new name that says what it returns"
        if not _NAME.match(name):
            return f"`{name}` is not a valid name: use one leading underscore, lower case words and underscores"
        if name_problem(name):  # the helper rules: no module, built-in, sandbox or namespace name
            return name_problem(name)
        if name in taken or self.store.find_by_normalized_name(name) is not None:
            return f"`{name}` is already taken; choose another name"
        return None

    # ----------------------------------------------------------------- checking

    def _verify(self, candidate: Candidate, sources: list[VerifiedProgram], by_id: dict[str, Question],
                dataset: Dataset, modules: ModuleSet, library: list[FunctionRecord]) -> None:
        """Every rewritten program must still be right; the helper must pass its ground-truth checks."""
        rewrites = list(zip(sources, candidate.rewritten.values(), strict=True))
        candidate.reason, candidate.evidence = verify_rewrites(
            _as_record(candidate), rewrites, by_id, dataset, modules, library, self.executor, self.truth)

    # ----------------------------------------------------------------- storing

    def _admit(self, candidate: Candidate, sources: list[VerifiedProgram], library: list[FunctionRecord],
               batch_id: int | None) -> None:
        rewrites = [(sources[index], code) for index, code in candidate.rewritten.items()]
        admit_helper(self.store, _as_record(candidate), rewrites, library, batch_id, evidence={
            "origin": "distilled", "questions": candidate.questions, "uses": len(candidate.pattern.instances),
            "tokens_saved": candidate.tokens_saved, "pattern": candidate.pattern.instances[0].source,
            **candidate.evidence})


def verify_rewrites(record: Any, rewrites: Sequence[tuple[VerifiedProgram, str]], by_id: dict[str, Question],
                    dataset: Dataset, modules: ModuleSet, library: Sequence[FunctionRecord], executor: Executor,
                    truth: TruthChecks | None) -> tuple[str | None, dict[str, Any]]:
    """Why the helper `record` may not be admitted (None: it may), and the evidence.

    Every source program, rewritten to call it, must still give its right answer in the sandbox,
    and the helper must pass the ground-truth checks its name invites.
    """
    try:
        check_library_source(record.name, record.code)
    except LibrarySourceError as exc:
        return str(exc), {}
    functions = [*library, record]
    failures, changed = [], []
    for source, code in rewrites:
        question = by_id[source.question_id]
        namespace = program_namespace(dataset.image(question), modules, functions, question.regions)
        result = check_infrastructure(executor(code, namespace))
        error = program_error(result)
        if error is not None:
            failures.append(f"question {question.question_id}: {error.splitlines()[-1]}")
        elif score_answer(normalize_answer(result.value), source.gold, question.answer_type, question.metric) < 1.0:
            failures.append(f"question {question.question_id}: answered {result.value!r}, was {source.answer!r}")
        else:
            continue
        changed.append(question.question_id)
    evidence: dict[str, Any] = {"reproduced": len(rewrites) - len(failures), "programs": len(rewrites)}
    if changed:
        evidence["changed"] = changed
    if failures:
        return f"{len(failures)} of {len(rewrites)} rewritten programs changed: {failures[0]}", evidence
    if truth is not None:
        checked = truth.check(record, functions, dataset, modules, list(by_id.values()))
        evidence["truth_check"] = checked.to_dict()
        if checked.passed is False:
            return f"its ground-truth check failed: {checked.failures[0]}", evidence
    return None, evidence


def admit_helper(store: ApiStore, record: Any, rewrites: Sequence[tuple[VerifiedProgram, str]],
                 library: Sequence[FunctionRecord], batch_id: int | None, evidence: dict[str, Any]) -> None:
    """Store the helper as admitted with its evidence, and its rewritten programs as worked examples."""
    names = {f.name for f in library}
    with store.transaction():
        store.propose(record.name, record.signature, record.docstring, batch_id=batch_id)
        store.implement(record.name, record.code, dependencies=sorted(_called(record.code) & names))
        store.record_decision(record.name, "admitted", mode="distilled", evidence=evidence)
        for source, code in rewrites:
            store.record_verified_program(
                batch_id=batch_id, question_id=source.question_id, question=source.question, variant=REWRITTEN,
                code=code, answer=source.answer, gold=source.gold, error=None, correct=True,
                uses=_called(code) & (names | {record.name}))


def right_programs(store: ApiStore, questions: Sequence[Question]) -> tuple[dict[str, Question], list[VerifiedProgram]]:
    """`questions` by id, and the right program of each that calls only helpers still in the library."""
    by_id = {q.question_id: q for q in questions}
    implemented = {f.name for f in store.functions(FunctionStatus.IMPLEMENTED)}
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


def _called(code: str) -> set[str]:
    return {n.func.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _distinct_programs(pattern: Pattern) -> list[Any]:
    seen: set[int] = set()
    kept = []
    for instance in pattern.instances:
        if instance.program not in seen:
            seen.add(instance.program)
            kept.append(instance)
    return kept


def _parse_stub(code: str) -> tuple[str, str]:
    """The name and docstring of the first `def` in `code` (a body is not needed)."""
    text = code if re.search(r"^\s+\S", code, re.MULTILINE) else code + "\n    pass\n"
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"the reply is not a Python def with a docstring: {exc.msg}") from None
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if node is None:
        raise ValueError("the reply holds no `def` line")
    return node.name, " ".join((ast.get_docstring(node) or "").split())


def _fallback_name(draft: HelperDraft, taken: set[str]) -> str:
    calls = [n for n in ast.walk(ast.parse(draft.body)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    called = [c.func.id for c in sorted(calls, key=lambda c: (c.lineno, c.col_offset))]  # type: ignore[union-attr]
    words = list(dict.fromkeys(w for c in called for w in c.lower().split("_") if w))[:4] or ["step"]
    base = "_" + "_then_".join(words)
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def helper_record(name: str, signature: str, docstring: str, code: str) -> Any:
    """What the namespace and the checks need of a function record, before the store holds it."""
    return SimpleNamespace(name=name, signature=signature, docstring=docstring, code=code, dependencies=())


def _as_record(candidate: Candidate) -> Any:
    return helper_record(candidate.name, candidate.draft.signature(), candidate.docstring, candidate.source)
