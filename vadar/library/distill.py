"""Distil helpers from programs that were right: bottom-up, admitted by reproduction.

Top-down proposals by a small model give helpers that are wrong or unused. Here the library grows
from what already worked: the right programs written on build questions (one per question, in its
latest rewritten form) are searched for statement runs that recur across at least `min_uses`
questions (a right yes/no answer counts half: it is right half the time by chance) up to names and literals (`vadar.library.fragments`). The best pattern (most tokens
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
from dataclasses import dataclass
from typing import Any

from api_store import ApiStore, FunctionRecord
from api_store.evidence import VerifiedProgram
from base_modules.module import ModuleSet
from omni3d_bench.types import Dataset, Question
from vadar import prompts
from vadar.library.candidates import Candidate, Route, Use
from vadar.library.drafting import HelperDraft, draft_helper
from vadar.library.fragments import Pattern, code_tokens, find_patterns, library_twins
from vadar.library.gate import Gate, Reproduces, SaysWhatItFixes, TruthCheck, admit, source_rule
from vadar.library.problems import DocstringProblem, NameProblem, NoName, Problem
from vadar.library.rewriting import rewrite
from vadar.library.rules import (documents_an_example, example_words, name_problem, names_an_example,
                                 parameter_words, silent_parameter, with_formula)
from vadar.library.sources import DistillReport, api_signatures, right_programs, support
from vadar.library.truth_checks import TruthChecks
from vadar.llm.chat import ChatModel, Role
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.programs.outcome import Executor
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import Reply, StepLoop, Verdict

NAMING = Sampling(max_tokens=120)
PLACEHOLDER = "_UNNAMED"  # not a valid name: a reply that copies it is asked again


@dataclass
class Found:
    """A pattern drafted as a helper, before it has a name."""

    draft: HelperDraft
    pattern: Pattern
    questions: list[str]
    tokens_saved: int


class Distiller:
    """Finds, names, checks and admits helpers distilled from the store's right programs."""

    def __init__(self, store: ApiStore, llm: ChatModel, executor: Executor, *, min_uses: int = 3,
                 max_helpers: int = 3, truth: TruthChecks | None = None,
                 on_event: Callable[[str], None] | None = None) -> None:
        self.store, self.executor = store, executor
        self.loop = StepLoop(llm, NAMING, 2, role=Role.DISTILL_NAME)
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
            library = self.store.library()
            found = self._best_pattern(codes, sources, library, tried)
            if found is None:
                break
            tried.add(found.pattern.shape)
            truth = TruthCheck(self.truth, dataset, modules, library, questions)
            named = self._name(found, codes, library, truth)
            if isinstance(named, Problem):
                name = _fallback_name(found.draft, self._taken(library))
                report.rejected[name] = named.log
                self.on_event(f"distilled candidate {name} not admitted: {named.log}")
                continue
            candidate, rewritten = named
            candidate.uses = [Use(sources[index], code) for index, code in rewritten.items()]
            gate = Gate([source_rule, Reproduces(self.executor, by_id, dataset, modules, library),
                         TruthCheck(self.truth, dataset, modules, library, list(by_id.values()))])
            problem = gate.first_problem(candidate)
            if problem is not None:
                report.rejected[candidate.name] = problem.log
                self.on_event(f"distilled candidate {candidate.name} not admitted: {problem.log}")
                continue
            admit(self.store, candidate, library=library, batch_id=batch_id, mode="distilled")
            for index, code in rewritten.items():
                codes[index] = code
            report.admitted.append(candidate.name)
            self.on_event(f"admitted distilled helper {candidate.name} (used by {len(found.questions)} "
                          f"questions, {found.tokens_saved} tokens saved)")
        report.tokens_after = sum(code_tokens(c) for c in codes)
        return report

    # ----------------------------------------------------------------- finding

    def _best_pattern(self, codes: list[str], sources: list[VerifiedProgram], library: list[FunctionRecord],
                      tried: set[str]) -> Found | None:
        params, returns = api_signatures(library)
        # a body the library already has is no new helper (`_area` found again under another name), nor
        # one call of a helper under a second name: `_count_same_attribute_in_image(image, object_prompt,
        # attribute)` only looked up the reference of `_count_same_attribute`, and 15 held-out programs
        # called it to count what matches the prompt
        twin = library_twins(library, set(params))
        ranked = []
        for pattern in find_patterns(codes, set(params), min_programs=self.min_uses):
            golds = {sources[i].question_id: sources[i].gold for i in pattern.programs}  # one per question
            if pattern.shape in tried or support(list(golds.values())) < self.min_uses:
                continue
            draft = draft_helper(pattern, params, returns)
            if twin(draft.body) is not None:
                continue
            rewritten = rewrite(codes, pattern, "_h", draft)
            saved = sum(code_tokens(codes[i]) - code_tokens(rewritten[i]) for i in rewritten)
            if saved > 0:
                ranked.append((saved, -len(pattern.shape), pattern, draft))
        if not ranked:
            return None
        saved, _, pattern, draft = max(ranked, key=lambda r: (r[0], r[1]))
        questions = sorted({sources[i].question_id for i in pattern.programs})
        return Found(draft, pattern, questions, saved)

    # ----------------------------------------------------------------- naming (AutoDoc)

    def _taken(self, library: Sequence[FunctionRecord]) -> set[str]:
        return {f.name for f in self.store.functions(include_failed=True)} | set(api_signatures(library)[0])

    def _naming_gate(self, found: Found, library: list[FunctionRecord], truth: TruthCheck) -> Gate:
        """What a name and docstring must satisfy, in order: the first problem goes back to the LLM."""
        taken = self._taken(library)
        examples = example_words(found.pattern)
        parameters = found.draft.parameters

        def not_placeholder(c: Candidate) -> Problem | None:
            return NameProblem(f"`{PLACEHOLDER}` is the placeholder: give the helper a new name that says what it "
                               "returns") if c.name == PLACEHOLDER else None

        def new_name(c: Candidate) -> Problem | None:
            taken_now = taken | ({c.name} if self.store.find_by_normalized_name(c.name) is not None else set())
            problem = name_problem(c.name, taken_now)
            return NameProblem(problem) if problem else None

        def no_example_name(c: Candidate) -> Problem | None:
            problem = names_an_example(c.name, examples)
            return NameProblem(problem) if problem else None

        def no_example_docstring(c: Candidate) -> Problem | None:
            problem = documents_an_example(c.docstring, examples - parameter_words(parameters))
            return DocstringProblem(problem) if problem else None

        def every_parameter(c: Candidate) -> Problem | None:
            problem = silent_parameter(parameters, c.docstring) if c.docstring else "write a one-sentence docstring"
            return DocstringProblem(problem) if problem else None

        def honest_claim(c: Candidate) -> Problem | None:
            """The same body is a good helper under an honest name (`_pixel_height`) and a harmful one
            under a false one (`_height_of_object` returning pixels): a failing claim asks for another name."""
            if truth(c) is None:
                return None
            failure = (c.evidence.truth_check or {}).get("failures", ["?"])[0]
            return NameProblem(f"the name `{c.name}` claims something this body does not compute: {failure}. "
                               "Name what it does compute")

        return Gate([not_placeholder, new_name, no_example_name, SaysWhatItFixes(library), no_example_docstring,
                     every_parameter, honest_claim])

    def _name(self, found: Found, codes: list[str], library: list[FunctionRecord],
              truth: TruthCheck) -> tuple[Candidate, dict[int, str]] | Problem:
        """The candidate named by the LLM and the programs rewritten to call it, or why it has no name."""
        # the whole pattern decides which literals are arguments: rewritten alone, one instance has none
        calling = rewrite(codes, found.pattern, PLACEHOLDER, found.draft)
        uses = [(instance.source, calling[instance.program]) for instance in _distinct_programs(found.pattern)[:2]]
        messages = [{"role": "system", "content": prompts.render("distill_system")},
                    {"role": "user", "content": prompts.render(
                        "distill_request", helper=found.draft.source(PLACEHOLDER, "..."), uses=uses,
                        parameters=[p for p in found.draft.parameters if p != "image"])}]
        gate = self._naming_gate(found, library, truth)
        named: list[Candidate] = []
        problems: list[str] = []

        def judge(reply: Reply) -> Verdict:
            try:
                name, docstring = _parse_stub(extract_code(reply.text))
            except (NoCodeError, ValueError) as exc:
                problems.append(str(exc))
                return Verdict.retry(prompts.render("distill_retry", error=str(exc)))
            docstring = with_formula(docstring, found.draft.parameters, found.draft.body)
            candidate = _candidate(found, name, docstring)
            problem = gate.first_problem(candidate)
            if problem is not None:
                problems.append(problem.for_llm)
                return Verdict.retry(prompts.render("distill_retry", error=problem.for_llm))
            named.append(candidate)
            return Verdict.accept()

        self.loop.run(messages, judge)
        if not named:  # a name that says nothing helps no program: the candidate is not admitted
            return NoName("the LLM gave it no usable name" + (f" ({problems[-1]})" if problems else ""))
        candidate = named[0]
        candidate.evidence.truth_check = None  # the gate checks the claim again with every build question
        return candidate, rewrite(codes, found.pattern, candidate.name, found.draft)


def _candidate(found: Found, name: str, docstring: str) -> Candidate:
    candidate = Candidate(Route.DISTILLED, name, found.draft.signature(), docstring, found.draft.source(name, docstring))
    evidence = candidate.evidence
    evidence.questions, evidence.uses = found.questions, len(found.pattern.instances)
    evidence.tokens_saved, evidence.pattern = found.tokens_saved, found.pattern.instances[0].source
    return candidate


def _distinct_programs(pattern: Pattern) -> list[Any]:
    seen: set[int] = set()
    kept = []
    for instance in pattern.instances:
        if instance.program not in seen:
            seen.add(instance.program)
            kept.append(instance)
    return kept


def _parse_stub(code: str) -> tuple[str, str]:
    """The name and docstring of the first `def` in `code` (a body is not needed).

    Only the def line and docstring are read: a reply that copies the body as well is often cut off
    by the token limit halfway through it, and its name and docstring are still usable."""
    closed = re.search(r"^[ \t]*def\b.*?:[ \t]*\n[ \t]*(\"\"\"|\'\'\').*?\1", code, re.MULTILINE | re.DOTALL)
    text = closed.group(0) + "\n    pass\n" if closed else code
    text = text if re.search(r"^\s+\S", text, re.MULTILINE) else text + "\n    pass\n"
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
