"""A program's calls checked against the API before it runs: clear mistakes cost no sandbox run.

A small model's programs pass a helper's `bool` where a box goes, call helpers that do not exist,
compute a relation and never use it, test a function without calling it, or ask `loc` for a
relational phrase. Each is visible in the
program's syntax tree, so each is a small pure check (a list, smolagents style) over facts read once
from the tree. A check speaks only when the mistake is certain: a value it cannot infer from the
program's own assignments is never blamed.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator, Sequence

from vadar.programs.call_signatures import NOT_A_BOX, CallableApi, CallSignature, Kind, annotation_kind
from vadar.programs.chain_calls import chain_lists, chain_unwalked
from vadar.programs.choice_args import choices_given
from vadar.programs.either_calls import union_phrases
from vadar.programs.loc_phrases import phrases_from_question
from vadar.programs.program_facts import (
    LOC,
    RESULT_NAME,
    CallProblem,
    Check,
    ProgramFacts,
    Value,
    arguments,
    call_text,
    program_facts,
    starred,
)
from vadar.programs.result_paths import result_on_every_path
from vadar.programs.stubs import StubFormatError, parse_bounded
from vadar.text import clip


# --- the checks -------------------------------------------------------------------------------


NEAREST_NAMES = 3
"""Existing names offered for a misspelt one: the closest is not always the one meant
(`_is_behind_of` is nearer `_is_left_of` than `_objects_behind`)."""


def unknown_functions(facts: ProgramFacts) -> list[CallProblem]:
    """A call of a name that neither the API nor the program defines, with the nearest real name."""
    problems = []
    for call in facts.calls():
        if not isinstance(call.func, ast.Name):
            continue
        name = call.func.id
        if name in facts.defined or facts.api.exists(name):
            continue
        message = f"line {call.lineno}: `{name}` does not exist (it is not in the API and the program does not define it)"
        nearest = difflib.get_close_matches(name, facts.api.callable_names(), n=NEAREST_NAMES, cutoff=0.6)
        if nearest:
            shown = [facts.api.signatures[n].text if n in facts.api.signatures else n for n in nearest]
            names = ", ".join(f"`{text}`" for text in shown)
            message += f"; the nearest existing name is {names}" if len(shown) == 1 else \
                f"; the nearest existing names are {names}"
        else:
            message += "; call only the functions listed in the API"
        problems.append(CallProblem(call.lineno, "unknown_functions", message + "."))
    return problems


def argument_counts(facts: ProgramFacts) -> list[CallProblem]:
    """A call whose positional arguments and keyword names do not fit the signature."""
    problems = []
    for call in facts.calls():
        signature = facts.signature(call)
        if signature is None or starred(call.args) or any(k.arg is None for k in call.keywords):
            continue
        misfit = signature.misfit(len(call.args), [k.arg for k in call.keywords if k.arg])
        if misfit is not None:
            problems.append(CallProblem(call.lineno, "argument_counts",
                                        f"line {call.lineno}: `{call_text(call)}` does not fit "
                                        f"`{signature.text}`: {misfit}."))
    return problems


def _box_hint(kind: Kind, argument: ast.expr) -> str:
    if kind is Kind.BOXES and isinstance(argument, ast.Call):
        # Told "for example `boxes[0]`", a CLEVR build's programs sent `loc(image, "small cube")` back unchanged.
        return f"take one box of the list: `{clip(ast.unparse(argument), 60)}[0]`"
    if kind is Kind.BOXES:
        shown = argument.id if isinstance(argument, ast.Name) else "boxes"
        return f"take one box of the list (for example `{shown}[0]`) or loop over its boxes"
    if kind is Kind.BOOL:
        return "a bool only says whether something holds; pass the box of an object"
    return "pass the box of an object, for example one from loc"


def _misfits(facts: ProgramFacts, wanted: Kind, refused: frozenset[Kind]
             ) -> Iterator[tuple[ast.Call, CallSignature, str, ast.expr, Value]]:
    """Every argument the program makes certain is of a `refused` kind, where its parameter's
    annotation promises `wanted`: the call, its signature, the parameter, the argument, its value."""
    for call in facts.calls():
        signature = facts.signature(call)
        if signature is None:
            continue
        for parameter, argument in arguments(call, signature):
            if annotation_kind(signature.annotation(parameter)) is not wanted:
                continue
            value = facts.value(argument)
            if value is not None and value.kind in refused:
                yield call, signature, parameter, argument, value


def boxes_given(facts: ProgramFacts) -> list[CallProblem]:
    """A bool, number, string or list passed where the signature wants one box."""
    return [CallProblem(call.lineno, "boxes_given",
                        f"line {call.lineno}: `{signature.name}({parameter}=...)` gets {value.kind.value} "
                        f"{value.origin}; `{parameter}` needs one box [x_min, y_min, x_max, y_max]: "
                        f"{_box_hint(value.kind, argument)}.")
            for call, signature, parameter, argument, value in _misfits(facts, Kind.BOX, NOT_A_BOX)]


NOT_A_BOX_LIST = frozenset({Kind.BOX, Kind.BOOL, Kind.NUMBER, Kind.STRING, Kind.PAIR})
"""Kinds that can never stand where a list of boxes goes."""


def _box_list_hint(kind: Kind, argument: ast.expr) -> str:
    if kind is Kind.STRING:
        return "find its objects first, for example `loc(image, 'red cubes')` or a relation helper's result"
    if kind is Kind.BOX:
        shown = argument.id if isinstance(argument, ast.Name) else "box"
        return (f"the objects to choose among or count, as loc or a helper returns them (for example "
                f"`loc(image, 'cubes')`); for that one object alone, `[{shown}]`")
    return "pass the boxes loc or a relation helper returns"


def box_lists_given(facts: ProgramFacts) -> list[CallProblem]:
    """A phrase, box, bool or number passed where the signature wants a list of boxes: a helper that
    takes lists (`_count_either(image, first, second)`) so that either side may name a relation is
    otherwise called with the question's phrases, as the catalogue's string version was."""
    return [CallProblem(call.lineno, "box_lists_given",
                        f"line {call.lineno}: `{signature.name}({parameter}=...)` gets {value.kind.value} "
                        f"{value.origin}; `{parameter}` needs a list of boxes: {_box_list_hint(value.kind, argument)}.")
            for call, signature, parameter, argument, value in _misfits(facts, Kind.BOXES, NOT_A_BOX_LIST)]


def unused_results(facts: ProgramFacts) -> list[CallProblem]:
    """A helper's result thrown away: a bare call, or a name assigned and never read."""
    problems = []
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            signature = facts.signature(node.value)
            if signature is not None and signature.helper and signature.returns_value:
                problems.append(CallProblem(
                    node.lineno, "unused_results",
                    f"line {node.lineno}: the result of `{call_text(node.value)}` is thrown away; "
                    f"assign it and use it (in a test, a count or `{RESULT_NAME}`)."))
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, ast.Call)):
            name = node.targets[0].id
            signature = facts.signature(node.value)
            if (signature is None or not signature.helper or name in facts.read or name == RESULT_NAME
                    or name == "_"):
                continue
            problems.append(CallProblem(
                node.lineno, "unused_results",
                f"line {node.lineno}: `{name}` gets the result of `{signature.name}` and is never read; "
                f"the program computes it and then ignores it: use `{name}` where the answer depends on it."))
    return problems


RELATION_WORDS = re.compile(
    r"\b(left of|right of|in front of|front of|behind|next to|beside|near|nearest|closest|farthest|furthest"
    r"|above|below|under|underneath|on top of|to the left|to the right|leftmost|rightmost|between"
    r"|same (?:color|colour|shape|size|material) as)\b", re.IGNORECASE)
"""Words that make a noun phrase relational: loc finds objects by what they are, not where."""


def relations_to_loc(facts: ProgramFacts) -> list[CallProblem]:
    """`loc` asked for a relational phrase ("the cube left of the sphere")."""
    problems = []
    for call in facts.calls():
        if not isinstance(call.func, ast.Name) or call.func.id != LOC or LOC in facts.defined:
            continue
        prompts = [k.value for k in call.keywords if k.arg == "object_prompt"] + call.args[1:2]
        for prompt in prompts:
            if not (isinstance(prompt, ast.Constant) and isinstance(prompt.value, str)):
                continue
            found = RELATION_WORDS.search(prompt.value)
            if found is None:
                continue
            problems.append(CallProblem(
                call.lineno, "relations_to_loc",
                f"line {call.lineno}: `loc(image, {clip(repr(prompt.value), 60)})` asks loc for a relation "
                f"({found.group(0)!r}); loc finds objects by a noun phrase only, such as \"cube\" or \"red sphere\". "
                "Find each object with its own loc call, then relate their boxes (with a library helper, depth "
                "or the box coordinates)."))
    return problems


def uncalled_functions(facts: ProgramFacts) -> list[CallProblem]:
    """An API function's name tested, compared or answered as a value, never called: a function is
    always true, so `"left" if is_left else "right"` always says "left". Right by chance on one
    warehouse build question, such a program became a worked example."""
    problems = []
    for node in ast.walk(facts.tree):
        for value in _truth_values(node):
            if isinstance(value, ast.Name) and value.id not in facts.defined and value.id in facts.api.signatures:
                signature = facts.api.signatures[value.id]
                problems.append(CallProblem(
                    value.lineno, "uncalled_functions",
                    f"line {value.lineno}: `{value.id}` is a function that is never called here, and a function "
                    f"as a value is always true; call it, `{signature.text}`, and use its result."))
    return problems


def _truth_values(node: ast.AST) -> list[ast.expr]:
    """The expressions `node` reads as a truth value or compares, or sets `final_result` to."""
    if isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
        return [node.test]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == RESULT_NAME for t in node.targets):
        return [node.value]
    return []


def redefined_api(facts: ProgramFacts) -> list[CallProblem]:
    """A program that writes out the definition of an API function instead of calling it: copied
    from the API text, it answers nothing (4 of the 26 CLEVR questions a 20-question build's library
    left without a working program ended so, `final_result` never set)."""
    problems = []
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in facts.api.signatures:
            signature = facts.api.signatures[node.name]
            problems.append(CallProblem(
                node.lineno, "redefined_api",
                f"line {node.lineno}: the program defines `{node.name}`, which the API already has; do not write "
                f"its definition: call `{signature.text}` with this question's objects and set `{RESULT_NAME}` "
                "to the answer."))
    return problems


CALL_CHECKS: tuple[Check, ...] = (unknown_functions, argument_counts, boxes_given, box_lists_given, choices_given,
                                  unused_results, uncalled_functions, relations_to_loc, phrases_from_question,
                                  redefined_api, chain_lists, chain_unwalked, union_phrases, result_on_every_path)
"""The checks every program passes before it runs, in the order their messages are shown."""


def check_program(code: str, api: CallableApi, checks: Sequence[Check] = CALL_CHECKS,
                  question: str = "") -> list[CallProblem]:
    """Every problem the checks find in `code` written for `question`, each message once (two calls
    alike on one line are one mistake); none for code that does not parse (the sandbox says why)."""
    try:
        tree = parse_bounded(code)
    except StubFormatError:
        return []
    facts = program_facts(tree, api, question)
    problems = [problem for check in checks for problem in check(facts)]
    return [problem for index, problem in enumerate(problems)
            if all(problem.message != earlier.message for earlier in problems[:index])]
