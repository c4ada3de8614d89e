"""A program that sets `final_result` on some paths only, caught before it runs.

A small model stops after a guard: `boxes = loc(image, "large yellow thing")`, `if boxes: yellow =
boxes[0]`, `else: final_result = "no"`, and nothing after. On a scene where the object is missing
it answers "no"; where it is found, it answers nothing. Such programs ran without an error on their
own scene and were scored wrong, or right by chance. Replayed over the 6,291 programs recorded in
the project's results pages (`benchmarks/check_replay.py`), a `final_result` not set on every path
was in 73 wrong CLEVR programs and 34 right ones (on the other data sets 40 and 0), the right ones
answering "no" on the guard's path, a constant, or from a loop that found its object on that scene;
the check names the block that leaves a path without an answer.

A path is answered when it assigns `final_result` or raises; both branches of an `if`, the body
and every handler of a `try` (or its `finally`), and the body of a `with` carry their answer on. A
loop's body may not run at all, so an assignment only inside a loop answers no path, unless the
loop's `else` sets it and every `break` comes after the body set it (a search that stops at the
first match and answers otherwise when none is found). A program
that never assigns `final_result` is left to the sandbox, which says so.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from vadar.programs.program_facts import RESULT_NAME, CallProblem, ProgramFacts


def _sets_result(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == RESULT_NAME for t in statement.targets)
    if isinstance(statement, ast.AnnAssign | ast.AugAssign):
        return isinstance(statement.target, ast.Name) and statement.target.id == RESULT_NAME
    return isinstance(statement, ast.Raise)


def answered(statements: Sequence[ast.stmt]) -> bool:
    """Whether every path through `statements` sets `final_result` (or raises)."""
    for statement in statements:
        if _sets_result(statement):
            return True
        if isinstance(statement, ast.If) and answered(statement.body) and answered(statement.orelse):
            return True
        if isinstance(statement, ast.Try | ast.TryStar) and (
                answered(statement.finalbody)
                or (answered(statement.body) and all(answered(h.body) for h in statement.handlers))):
            return True
        if isinstance(statement, ast.With) and answered(statement.body):
            return True
        if (isinstance(statement, ast.For | ast.While) and answered(statement.orelse)
                and _breaks_answered(statement.body)):
            return True  # `for ...: ... final_result = x; break` then `else: final_result = y`
    return False


def _breaks_answered(statements: Sequence[ast.stmt], answered_so_far: bool = False) -> bool:
    """Whether every `break` of a loop body (not of a loop inside it) comes after `final_result` is set."""
    for statement in statements:
        answered_so_far = answered_so_far or _sets_result(statement)
        if isinstance(statement, ast.Break) and not answered_so_far:
            return False
        blocks: list[list[ast.stmt]] = []
        if isinstance(statement, ast.If):
            blocks = [statement.body, statement.orelse]
        elif isinstance(statement, ast.Try | ast.TryStar):
            blocks = [statement.body, *[h.body for h in statement.handlers], statement.orelse, statement.finalbody]
        elif isinstance(statement, ast.With):
            blocks = [statement.body]
        if not all(_breaks_answered(block, answered_so_far) for block in blocks):
            return False
        answered_so_far = answered_so_far or answered([statement])
    return True


def _mentions_result(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == RESULT_NAME and isinstance(n.ctx, ast.Store)
               for n in ast.walk(node))


def _where(statement: ast.stmt) -> str:
    if isinstance(statement, ast.If):
        return f"the `if` at line {statement.lineno} sets it in one branch only"
    if isinstance(statement, ast.For | ast.While):
        return f"the loop at line {statement.lineno} sets it only when its body runs and reaches it"
    return f"the block at line {statement.lineno} sets it on some paths only"


def result_on_every_path(facts: ProgramFacts) -> list[CallProblem]:
    """`final_result` set on some paths only: the program ends without an answer on the others."""
    body = facts.tree.body
    if answered(body) or not _mentions_result(facts.tree):
        return []
    culprit = next(s for s in body if _mentions_result(s))
    return [CallProblem(
        culprit.lineno, "result_on_every_path",
        f"line {culprit.lineno}: `{RESULT_NAME}` is not set on every path ({_where(culprit)}): on a scene that "
        f"takes another path the program ends with no answer. Finish every branch, or set `{RESULT_NAME}` "
        "after the blocks, from what they found.")]
