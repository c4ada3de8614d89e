"""What a straight-line helper body computes, as one expression of its parameters.

Read two ways: the distiller completes a vague docstring with it, and the API text shows a helper
whose body is one such expression as that expression, since its name and docstring alone can
mislead (`_count_same_attribute_in_image(image, object_prompt, ...)` counts the objects sharing an
attribute with the first `object_prompt` box, not those matching the prompt; `_size_of_object`, said
to be "in image pixels", returns `vqa(image, 'What size is this object?', bbox)`).
"""

from __future__ import annotations

import ast
import copy
import re
import textwrap
from collections.abc import Collection

MAX_FORMULA_CHARS = 160


def return_formula(body: str) -> str | None:
    """What a straight-line body returns, as one expression of its parameters, or None.

    `d1 = depth(image, bbox); d2 = depth(image, bbox2); return d1 - d2` reads as
    `depth(image, bbox) - depth(image, bbox2)`: exact where a one-sentence docstring is vague
    ("the depth difference between two boxes" does not say which is subtracted from which).
    Bodies with loops, branches or comprehensions, and formulas too long to read, give None.
    """
    try:
        statements = ast.parse(textwrap.dedent(body)).body
    except SyntaxError:
        return None
    if not statements or not isinstance(statements[-1], ast.Return) or statements[-1].value is None:
        return None
    values: dict[str, ast.expr] = {}

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return copy.deepcopy(values[node.id]) if node.id in values else node

    for statement in statements[:-1]:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            return None
        values[statement.targets[0].id] = Inline().visit(copy.deepcopy(statement.value))
    formula = Inline().visit(copy.deepcopy(statements[-1].value))
    if any(isinstance(n, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp | ast.Lambda | ast.IfExp)
           for n in ast.walk(formula)):
        return None
    text = ast.unparse(formula)
    return text if len(text) <= MAX_FORMULA_CHARS else None


def body_formula(code: str | None, modules: Collection[str] = ()) -> str | None:
    """The expression a straight-line helper body returns when it calls another library helper or
    one of `modules`, else None."""
    try:
        tree = ast.parse(textwrap.dedent(code or ""))
    except SyntaxError:
        return None
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if function is None:
        return None
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    formula = return_formula(ast.unparse(ast.Module(body=body, type_ignores=[])))
    callee = r"_[A-Za-z]\w*" + "".join(f"|{re.escape(m)}" for m in modules)
    return formula if formula and re.search(rf"(?<![\w.])(?:{callee})\(", formula) else None


def alias_of(body: str, helpers: Collection[str]) -> str | None:
    """The library helper a straight-line body only calls (its other arguments found by a module, as
    `loc(image, object_prompt)[0]`), or None: such a body adds a second name for one step, not a step."""
    formula = return_formula(body)
    if formula is None:
        return None
    call = ast.parse(formula, mode="eval").body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in helpers):
        return None
    inner = [n for arg in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(arg)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in helpers]
    return None if inner else call.func.id
