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
stored as worked examples, so the Program agent sees the helper in use.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from api_store import ApiStore, FunctionRecord, FunctionStatus
from api_store.evidence import VerifiedProgram
from base_modules.module import ModuleSet
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Dataset, Question
from vadar import prompts
from vadar.programs.api_text import render_api
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.programs.helper_rules import name_problem
from vadar.programs.answers import normalize_answer
from vadar.programs.outcome import Executor, check_infrastructure
from vadar.agents.program import program_error
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import Reply, StepLoop, Verdict
from vadar.library.distill import (DistillReport, admit_helper, api_signatures, helper_record, right_programs,
                                   verify_rewrites)
from vadar.library.docstrings import redocument
from vadar.library.drafting import helper_source, silent_parameter
from vadar.library.fragments import code_tokens
from vadar.library.frames import frame_questions, group_programs, question_frame
from vadar.programs.namespace import program_namespace
from vadar.library.truth_checks import TruthChecks
from vadar.llm.chat import ChatModel
from vadar.sandbox import LibrarySourceError, check_library_source

WRITING = Sampling(max_tokens=500)
MAX_SHOWN = 2  # right programs shown to the LLM per group
MAX_GROUP = 8  # questions of one group the helper must answer (the first ones)
MAX_OTHERS = 6  # build questions of the group's frame without a right program, answered as a check
FRAME_MIN_RIGHT = 2 / 3  # of those, the share the helper must answer right
_NAME = re.compile(r"^_[a-z][a-z0-9_]{2,40}$")


@dataclass
class Written:
    """A helper the LLM wrote for a group, with one call per question."""

    name: str
    docstring: str
    signature: str
    code: str
    calls: list[str | None] = field(default_factory=list)  # None: a question the helper does not fit
    silent: str | None = None  # the docstring says nothing of a parameter: asked again once the code is right


def _parse_code(text: str) -> ast.Module:
    """The reply's code block, parsed; ValueError says what is wrong."""
    try:
        return ast.parse(extract_code(text))
    except NoCodeError as exc:
        raise ValueError(str(exc)) from None
    except SyntaxError as exc:
        raise ValueError(f"the code does not parse: {exc.msg} (line {exc.lineno})") from None


def parse_reply(text: str, count: int, taken: set[str]) -> Written:
    """The helper `def` and the `count` one-line calls of a reply; ValueError says what is wrong."""
    tree = _parse_code(text)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(defs) != 1:
        several = ", ".join(f"`{d.name}`" for d in defs)
        raise ValueError(f"write exactly one helper `def`, not {len(defs)}" + (
            f" ({several}): make what differs between them (an attribute, a relation, an object) a parameter "
            "of one helper and pass it in each call" if defs else ""))
    node = defs[0]
    if not _NAME.match(node.name) or node.name in taken:
        raise ValueError(f"`{node.name}` cannot be used: the name must be new, start with one underscore and "
                         "use lower-case words joined by underscores")
    if name_problem(node.name):  # the helper rules: no module, built-in, sandbox or namespace name
        raise ValueError(name_problem(node.name))
    try:  # the rule every stored helper follows: one plain def, constant defaults, no decorators
        check_library_source(node.name, ast.unparse(node))
    except LibrarySourceError as exc:
        raise ValueError(str(exc)) from None
    docstring = " ".join((ast.get_docstring(node) or "").split())
    if not docstring:
        raise ValueError("the helper needs a one-sentence docstring")
    silent = silent_parameter([a.arg for a in node.args.args], docstring)
    calls = answer_lines(tree, node.name)
    if len(calls) != count or not any(calls):
        raise ValueError(f"after the helper, write one line `final_result = {node.name}(...)` for each of the "
                         f"{count} questions, in order ({sum(1 for c in calls if c)} found)")
    if len({c for c in calls if c}) < min(2, sum(1 for c in calls if c)):
        raise ValueError("every call passes the same arguments: the helper must take what differs between "
                         "the questions as parameters")
    node.body = node.body[1:] if ast.get_docstring(node) else node.body
    if not node.body:
        raise ValueError("the helper has no body")
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    signature = f"({ast.unparse(node.args)}){returns}"
    body = "\n".join("    " + line for line in ast.unparse(node.body).splitlines()) + "\n"
    return Written(node.name, docstring, signature, helper_source(node.name, signature, docstring, body), calls, silent)


def answer_lines(tree: ast.Module, name: str) -> list[str | None]:
    """Per `final_result = ...` line of a reply, in order: the call of helper `name` it makes, or None
    where the line computes its answer otherwise (the LLM's own sign that the helper does not fit)."""
    lines: list[str | None] = []
    for n in tree.body:
        value = getattr(n, "value", None)
        helper_call = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == name
        answers = isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["final_result"]
        if answers or (isinstance(n, ast.Expr) and helper_call):
            lines.append(ast.unparse(value) if helper_call else None)
    return lines


def _calls_of(text: str, name: str, count: int) -> list[str | None]:
    """The `count` answer lines of a reply (None: not a call of `name`); ValueError says what is wrong."""
    tree = _parse_code(text)
    calls = answer_lines(tree, name)
    if len(calls) != count:
        raise ValueError(f"write one line `final_result = {name}(...)` for each of the {count} questions, "
                         f"in order ({len(calls)} found)")
    return calls


def misuse(written: Written, api_params: dict[str, list[tuple[str, str]]]) -> str | None:
    """Why the helper is no real computation: it calls no API function, or it tests a parameter that
    it passes on as an object description (`object_prompt == "cylinders"`: a lookup of the group's own
    questions). A parameter compared with a closed set of words (`side == "left"`) is fine."""
    tree = ast.parse(written.code)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    if not {c.func.id for c in calls} & set(api_params):  # type: ignore[union-attr]
        return "the helper must call the API (loc, depth, vqa, ...) to compute its answer"
    described: set[str] = set()  # helper parameters passed to the API as an object description
    for call in calls:
        slots = [name for name, _ in api_params.get(call.func.id, [])]  # type: ignore[union-attr]
        for position, argument in enumerate(call.args):
            if isinstance(argument, ast.Name) and position < len(slots) and "prompt" in slots[position]:
                described.add(argument.id)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            names = {s.id for s in sides if isinstance(s, ast.Name)} & described
            texts = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
            if names and texts:
                return (f"the helper tests `{sorted(names)[0]}` against the questions' own phrases ({texts[0]!r}): "
                        "pass it on to the API instead of testing for it")
    return None


class GroupWriter:
    """Groups the right build programs by question frame and has the LLM write one helper per group."""

    def __init__(self, store: ApiStore, llm: ChatModel, executor: Executor, *, min_uses: int = 3,
                 max_helpers: int = 3, truth: TruthChecks | None = None, max_reply_tokens: int | None = None,
                 attempts: int = 2, on_event: Callable[[str], None] | None = None) -> None:
        self.store, self.executor = store, executor
        self.loop = StepLoop(llm, WRITING, attempts, max_reply_tokens)
        self.min_uses, self.max_helpers, self.truth = min_uses, max_helpers, truth
        self.on_event = on_event or (lambda message: None)

    def write(self, dataset: Dataset, modules: ModuleSet, questions: Sequence[Question],
              batch_id: int | None = None) -> DistillReport:
        by_id, sources = right_programs(self.store, questions)
        report = DistillReport(programs=len(sources))
        report.tokens_before = report.tokens_after = sum(code_tokens(p.code or "") for p in sources)
        # a group whose helper was admitted once and has since been retired is not written again
        tried = {tuple(e.get("questions", ())) for d in self.store.decisions()
                 if (e := d.evidence or {}).get("origin") == "group"}
        right = {p.question_id for p in sources}
        codes: dict[str, str] = {}
        for program in self.store.verified_programs():
            if program.code and program.question_id in by_id:
                codes.setdefault(program.question_id, program.code)
        unanswered = [q for q in questions if q.question_id not in right]
        for group in group_programs([p for p in sources if not _one_call(p)]):
            if len(report.admitted) >= self.max_helpers or len(group) < self.min_uses:
                break
            group = group[:MAX_GROUP]
            ids = tuple(p.question_id for p in group)
            if ids in tried:
                continue
            library = self.store.functions(FunctionStatus.IMPLEMENTED)
            anchor = question_frame(group[0].question, group[0].code or "")
            others = frame_questions(anchor, unanswered, codes)[:MAX_OTHERS]
            name, reason, saved = self._write_one(group, others, by_id, dataset, modules, library, batch_id)
            if reason is not None:
                report.rejected[name] = reason
                self.on_event(f"group helper {name} not admitted: {reason}")
                continue
            report.admitted.append(name)
            report.tokens_after -= saved
            self.on_event(f"admitted group helper {name} ({len(group)} questions, {saved} tokens saved)")
        return report

    def _write_one(self, group: list[VerifiedProgram], others: list[Question], by_id: dict[str, Question],
                   dataset: Dataset, modules: ModuleSet, library: list[FunctionRecord],
                   batch_id: int | None) -> tuple[str, str | None, int]:
        api = render_api(library)
        api_params = api_signatures(library)[0]
        taken = {f.name for f in self.store.functions(include_failed=True)} | set(api_params)
        messages = [{"role": "system", "content": prompts.render("group_system", api=api)},
                    {"role": "user", "content": prompts.render(
                        "group_request", shown=group[:MAX_SHOWN], questions=[p.question for p in group])}]
        outcome: dict[str, Any] = {}

        def judge(reply: Reply) -> Verdict:
            try:
                written = parse_reply(reply.text, len(group), taken)
            except ValueError as exc:
                outcome.setdefault("reason", str(exc))
                return Verdict.retry(prompts.render("group_retry", error=str(exc)))
            problem = misuse(written, api_params)
            rewrites = [(p, f"final_result = {call}\n") for p, call in zip(group, written.calls, strict=True) if call]
            misfits = [p.question_id for p, call in zip(group, written.calls, strict=True) if not call]
            if problem is None and misfits and (len(rewrites) < self.min_uses or 3 * len(rewrites) < 2 * len(group)):
                problem = (f"the helper is called for only {len(rewrites)} of the {len(group)} questions: make what "
                           "the others differ in a parameter, and call it on every line")
            if problem is None:
                record = helper_record(written.name, written.signature, written.docstring, written.code)
                problem, evidence = verify_rewrites(record, rewrites, by_id, dataset, modules, library,
                                                    self.executor, self.truth)
                if problem is None and others:
                    problem, evidence["frame_check"] = self._frame_check(
                        written, record, others, messages[0], dataset, modules, library)
                if problem is None and written.silent:
                    problem, written, record = self._redocument(written, record, messages[0], evidence)
                if misfits:
                    evidence["left_out"] = misfits
                outcome.update(written=written, rewrites=rewrites, evidence=evidence, record=record)
            outcome["reason"] = problem
            outcome["name"] = written.name
            if problem is None:
                return Verdict.accept()
            return Verdict.retry(prompts.render("group_retry", error=_for_the_llm(problem, group),
                                                changed="rewritten programs changed" in problem
                                                or "other questions of this kind" in problem))

        self.loop.run(messages, judge)
        name, reason = outcome.get("name", "(unnamed)"), outcome.get("reason", "no usable reply")
        if reason is not None and not self._keep_the_questions_it_answers(outcome, group, by_id, dataset, modules,
                                                                          library):
            return name, reason, 0
        rewrites = outcome["rewrites"]
        saved = sum(code_tokens(p.code or "") - code_tokens(code) for p, code in rewrites)
        if saved <= 0:
            return name, "the calls are not shorter than the programs they replace", 0
        admit_helper(self.store, outcome["record"], rewrites, library, batch_id, evidence={
            "origin": "group", "questions": [p.question_id for p, _ in rewrites], "uses": len(rewrites),
            "tokens_saved": saved, "frame": " ".join(question_frame(group[0].question, group[0].code or "")),
            **outcome["evidence"]})
        return name, None, saved

    def _redocument(self, written: Written, record: Any, system: dict[str, str],
                    evidence: dict[str, Any]) -> tuple[str | None, Written, Any]:
        """Right code with a docstring silent on a parameter: ask for the docstring alone."""
        parameters = [a.arg for a in ast.parse(written.code).body[0].args.args]  # type: ignore[attr-defined]
        docstring = redocument(self.loop.llm, system, written.code, written.name, parameters,
                               written.silent or "", max_reply_tokens=self.loop.max_reply_tokens)
        if docstring is None:
            return written.silent, written, record
        evidence["docstring_rewritten_from"] = written.docstring
        body = written.code.split("\n", 2)[2]  # after the `def` line and the docstring line of `helper_source`
        fixed = Written(written.name, docstring, written.signature,
                        helper_source(written.name, written.signature, docstring, body), written.calls)
        return None, fixed, helper_record(fixed.name, fixed.signature, fixed.docstring, fixed.code)

    def _frame_check(self, written: Written, record: Any, others: list[Question], system: dict[str, str],
                     dataset: Dataset, modules: ModuleSet,
                     library: list[FunctionRecord]) -> tuple[str | None, dict[str, Any]]:
        """The helper on the frame's build questions that no right program answered, against gold.

        Asked in a request of its own, after the helper reproduced its group, so the group request
        stays as short as before. A reply that gives no usable call per question is no evidence.
        """
        calls: list[str] = []

        def judge(reply: Reply) -> Verdict:
            try:
                calls[:] = _calls_of(reply.text, written.name, len(others))
            except ValueError as exc:
                return Verdict.retry(prompts.render("group_retry", error=str(exc)))
            return Verdict.accept()

        request = prompts.render("group_frame", helper=written.code, name=written.name,
                                 questions=[q.question for q in others])
        StepLoop(self.loop.llm, WRITING, 2, self.loop.max_reply_tokens).run(
            [system, {"role": "user", "content": request}], judge)
        if not calls:
            return None, {"questions": len(others), "right": None}
        functions = [*library, record]
        wrong: list[str] = []
        fitting = [(q, call) for q, call in zip(others, calls, strict=True) if call]
        if not fitting:
            return None, {"questions": 0, "right": None}
        others = [q for q, _ in fitting]
        for question, call in fitting:
            namespace = program_namespace(dataset.image(question), modules, functions, question.regions)
            result = check_infrastructure(self.executor(f"final_result = {call}\n", namespace))
            error = program_error(result)
            if error is not None:
                wrong.append(f"{question.question!r}: {error.splitlines()[-1]}")
            elif score_answer(normalize_answer(result.value), question.answer, question.answer_type,
                              question.metric) < 1.0:
                wrong.append(f"{question.question!r}: it answered {result.value!r}, which is wrong")
        evidence = {"questions": len(others), "right": len(others) - len(wrong)}
        if len(others) - len(wrong) >= FRAME_MIN_RIGHT * len(others):
            return None, evidence
        return (f"on {len(wrong)} of {len(others)} other questions of this kind the helper is wrong: {wrong[0]}",
                evidence)

    def _keep_the_questions_it_answers(self, outcome: dict[str, Any], group: list[VerifiedProgram],
                                       by_id: dict[str, Question], dataset: Dataset, modules: ModuleSet,
                                       library: list[FunctionRecord]) -> bool:
        """A helper right on most of its group is kept for the questions it answers right.

        A question can land in a group it does not fit (its object is described by a relation the
        helper's phrase parameter cannot carry). The helper is kept when the questions it answers
        right are at least `min_uses` and two thirds of the group; it is checked again on them
        alone, and the others are recorded as left out. `outcome` is updated in place.
        """
        changed = set(outcome.get("evidence", {}).get("changed", ()))
        kept = [(p, code) for p, code in outcome.get("rewrites", ()) if p.question_id not in changed]
        if not changed or len(kept) < self.min_uses or 3 * len(kept) < 2 * len(group):
            return False
        problem, evidence = verify_rewrites(outcome["record"], kept, by_id, dataset, modules, library,
                                            self.executor, self.truth)
        if problem is not None:
            return False
        left_out = changed | set(outcome["evidence"].get("left_out", ()))
        outcome.update(rewrites=kept, reason=None, evidence={**evidence, "left_out": sorted(left_out)})
        return True


def _one_call(program: VerifiedProgram) -> bool:
    """A program that is one call of a library function: its question's group has a helper already."""
    return bool(program.uses) and len((program.code or "").strip().splitlines()) == 1


def _for_the_llm(reason: str, group: Sequence[VerifiedProgram]) -> str:
    """The failure with each question named by its number and text, and without the right answer it
    was compared with (the LLM must compute it, not copy it)."""
    for number, program in enumerate(group, 1):
        reason = reason.replace(f"question {program.question_id}:", f"question {number} ({program.question}):")
    return re.sub(r", was .*$", ", which is wrong", reason)
