"""A group writer's reply read: the helper `def`, one call per question, and what makes it no helper.

The LLM answers a group request (`vadar.library.clusters`) with one parameterised helper and a
line `final_result = _helper(...)` per question of the group, in order; a line that computes its
answer otherwise marks a question the helper does not fit. A reply of another form raises
ValueError with the text to send back.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from vadar.library.drafting import helper_source
from vadar.library.problems import MisuseProblem, Problem
from vadar.library.rules import name_problem, silent_parameter
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.sandbox import LibrarySourceError, check_library_source


@dataclass
class Written:
    """A helper the LLM wrote for a group, with one call per question."""

    name: str
    docstring: str
    signature: str
    code: str
    calls: list[str | None] = field(default_factory=list)  # None: a question the helper does not fit
    silent: str | None = None  # the docstring says nothing of a parameter: asked again once the code is right


def parse_code(text: str) -> ast.Module:
    """The reply's code block, parsed; ValueError says what is wrong."""
    try:
        return ast.parse(extract_code(text))
    except NoCodeError as exc:
        raise ValueError(str(exc)) from None
    except SyntaxError as exc:
        raise ValueError(f"the code does not parse: {exc.msg} (line {exc.lineno})") from None


def parse_reply(text: str, count: int, taken: set[str]) -> Written:
    """The helper `def` and the `count` one-line calls of a reply; ValueError says what is wrong."""
    tree = parse_code(text)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(defs) != 1:
        several = ", ".join(f"`{d.name}`" for d in defs)
        raise ValueError(f"write exactly one helper `def`, not {len(defs)}" + (
            f" ({several}): make what differs between them (an attribute, a relation, an object) a parameter "
            "of one helper and pass it in each call" if defs else ""))
    node = defs[0]
    problem = name_problem(node.name, taken)
    if problem is not None:
        raise ValueError(problem)
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


def calls_of(text: str, name: str, count: int) -> list[str | None]:
    """The `count` answer lines of a reply (None: not a call of `name`); ValueError says what is wrong."""
    tree = parse_code(text)
    calls = answer_lines(tree, name)
    if len(calls) != count:
        raise ValueError(f"write one line `final_result = {name}(...)` for each of the {count} questions, "
                         f"in order ({len(calls)} found)")
    return calls


def misuse(written: Written, api_params: dict[str, list[tuple[str, str]]]) -> Problem | None:
    """Why the helper is no real computation: it calls no API function, or it tests a parameter that
    it passes on as an object description (`object_prompt == "cylinders"`: a lookup of the group's own
    questions). A parameter compared with a closed set of words (`side == "left"`) is fine."""
    tree = ast.parse(written.code)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    if not {c.func.id for c in calls} & set(api_params):  # type: ignore[union-attr]
        return MisuseProblem("the helper must call the API (loc, depth, vqa, ...) to compute its answer")
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
                return MisuseProblem(f"the helper tests `{sorted(names)[0]}` against the questions' own phrases "
                                     f"({texts[0]!r}): pass it on to the API instead of testing for it")
    return None
