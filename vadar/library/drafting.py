"""A pattern as a helper: its parameters, body and signature, and programs rewritten to call it.

Names come from the first instance's variables and from the API parameters each literal is
passed as (`loc(image, "red cube")` gives `object_prompt: str`); a variable named after one use's
object (`table_depth`) takes its parameter's name instead (`bbox_depth`). The return annotation
comes from the API function that computed the returned value.
"""

from __future__ import annotations

import ast
import copy
import keyword
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vadar.library.fragments import BUILTIN_NAMES, MAX_RUN, RESULT, Instance, Pattern, statement_blocks, normalise


@dataclass(frozen=True)
class HelperDraft:
    """A pattern as a helper: parameters, body source and the call each instance is replaced by."""

    parameters: list[str]
    annotations: dict[str, str]
    returns: str | None
    body: str
    has_output: bool

    def source(self, name: str, docstring: str) -> str:
        body = "\n".join("    " + line for line in self.body.splitlines()) + "\n"
        return helper_source(name, self.signature(), docstring, body)

    def signature(self) -> str:
        params = ", ".join(f"{p}: {self.annotations[p]}" if p in self.annotations else p for p in self.parameters)
        return f"({params})" + (f" -> {self.returns}" if self.returns else "")


def helper_source(name: str, signature: str, docstring: str, body: str) -> str:
    """The stored text of a helper: its `def` line, its one-line docstring, then its indented body."""
    doc = docstring.strip().replace('"""', "'''")
    return f'def {name}{signature}:\n    """{doc}"""\n{body}'


def draft_helper(pattern: Pattern, api_params: Mapping[str, list[tuple[str, str]]],
                 api_returns: Mapping[str, str]) -> HelperDraft:
    """The helper a pattern reads as, named after the first instance's variables and the API's parameters.

    An input the instances spell differently (`green_stool` in one, `cabinet` in another) is named
    after the API parameter it is passed as instead: a name from one use misleads every other.
    """
    first = pattern.instances[0]
    varying = pattern.varying_holes()
    output = pattern.output()
    taken = set(api_params) | BUILTIN_NAMES | {"image", RESULT}
    names: dict[str, str] = {}  # placeholder -> readable name
    annotations: dict[str, str] = {}
    statements = [copy.deepcopy(s) for s in first.statements]
    for k, original in enumerate(first.variables):
        if original != RESULT and k in first.inputs and len({i.variables[k] for i in pattern.instances}) > 1:
            original = (_api_slot(statements, original, api_params) or ("value", ""))[0]  # not one use's `green_stool`
        names[f"v{k}"] = _fresh("result" if original == RESULT else original, taken)
    hole_context = _hole_context(statements, api_params)
    for k in varying:
        label, annotation = hole_context.get(k, ("value", type(first.holes[k]).__name__))
        names[f"h{k}"] = _fresh(label, taken)
        annotations[names[f"h{k}"]] = annotation
    alias = pattern.parameter_of()
    for k, representative in alias.items():
        names[f"h{k}"] = names[f"h{representative}"]
    _rename_use_locals(pattern, names, taken)

    class Rename(ast.NodeTransformer):
        counter = 0

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in first.variables:
                node.id = names[f"v{first.variables.index(node.id)}"]
            return node

        def visit_Constant(self, node: ast.Constant) -> ast.AST:
            if isinstance(node.value, bool) or not isinstance(node.value, str | int | float):
                return node
            index, Rename.counter = Rename.counter, Rename.counter + 1
            return ast.Name(id=names[f"h{index}"], ctx=ast.Load()) if index in alias else node

    body = [Rename().visit(s) for s in statements]
    uses_image = any(isinstance(n, ast.Name) and n.id == "image" for s in body for n in ast.walk(s))
    parameters = (["image"] if uses_image else []) + [names[f"v{k}"] for k in first.inputs] + \
        [names[f"h{k}"] for k in varying]
    if uses_image:
        annotations["image"] = "Image"
    for k in first.inputs:
        kind = (_api_slot(body, names[f"v{k}"], api_params) or ("", ""))[1]
        if kind:
            annotations[names[f"v{k}"]] = kind
    returns = None
    text = "\n".join(ast.unparse(s) for s in body)
    if output is not None:
        text += f"\nreturn {names[f'v{output}']}"
        returns = _assigned_type(body, names[f"v{output}"], api_returns)
    return HelperDraft(parameters, annotations, returns, text, output is not None)


def _rename_use_locals(pattern: Pattern, names: dict[str, str], taken: set[str]) -> None:
    """A local the uses spell differently (`table_depth`, `stool_depth`) is named after the
    parameter it comes from (`bbox_depth`), not after the first use's object."""
    first = pattern.instances[0]
    spelled: dict[str, str] = {}  # one use's word -> the parameter's word
    for k in first.inputs:
        if names[f"v{k}"] != first.variables[k]:
            spelled[first.variables[k]] = names[f"v{k}"]
    for k in pattern.varying_holes():
        value = first.holes[k]
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z]+( [A-Za-z]+)*", value.strip()):
            stem, number = re.fullmatch(r"(.*?)(?:_prompt)?(\d*)", names[f"h{k}"]).groups()  # object_prompt2
            stem = stem[:3] if stem in BUILTIN_NAMES else stem  # `obj2`, not the builtin `object`
            spelled[value.strip().lower().replace(" ", "_")] = stem + number
    for k, original in enumerate(first.variables):
        if k in first.inputs or original == RESULT or len({i.variables[k] for i in pattern.instances}) == 1:
            continue
        renamed = original
        for word, parameter in sorted(spelled.items(), key=lambda item: -len(item[0])):
            renamed = re.sub(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", parameter, renamed)
        if renamed != original:
            names[f"v{k}"] = _fresh(renamed, taken)


def _fresh(name: str, taken: set[str]) -> str:
    base = name.lstrip("_") or "value"
    if keyword.iskeyword(base):
        base += "_"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}{n}", n + 1
    taken.add(candidate)
    return candidate


def _hole_context(statements: list[ast.stmt], api_params: Mapping[str, list[tuple[str, str]]]) -> dict[int, tuple[str, str]]:
    """For each literal, the API parameter it is passed as (its name and annotation), if any."""
    found: dict[int, tuple[str, str]] = {}
    constants = [n for s in statements for n in ast.walk(s)
                 if isinstance(n, ast.Constant) and not isinstance(n.value, bool) and isinstance(n.value, str | int | float)]
    order = {id(n): k for k, n in enumerate(_in_source_order(statements, constants))}
    for s in statements:
        for node in ast.walk(s):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in api_params:
                for position, arg in enumerate(node.args):
                    if id(arg) in order and position < len(api_params[node.func.id]):
                        found.setdefault(order[id(arg)], api_params[node.func.id][position])
    return found


def _in_source_order(statements: list[ast.stmt], nodes: list[ast.AST]) -> list[ast.AST]:
    """`nodes` in the order a NodeTransformer visits them (the order holes were numbered in)."""
    wanted = {id(n) for n in nodes}
    ordered: list[ast.AST] = []

    class Collect(ast.NodeVisitor):
        def visit_Constant(self, node: ast.Constant) -> None:
            if id(node) in wanted:
                ordered.append(node)

    for s in statements:
        Collect().visit(s)
    return ordered


def _api_slot(statements: list[ast.stmt], name: str,
              api_params: Mapping[str, list[tuple[str, str]]]) -> tuple[str, str] | None:
    """The API parameter (name, annotation) a variable is first passed as, if any."""
    for s in statements:
        for node in ast.walk(s):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in api_params:
                for position, arg in enumerate(node.args):
                    if isinstance(arg, ast.Name) and arg.id == name and position < len(api_params[node.func.id]):
                        return api_params[node.func.id][position]
    return None


def _assigned_type(body: list[ast.stmt], name: str, api_returns: Mapping[str, str]) -> str | None:
    for s in body:
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets):
            value = s.value
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call):
                returned = _call_return(value.value, api_returns)
                return returned[5:-1] if returned and returned.startswith("list[") else None
            if isinstance(value, ast.Call):
                if isinstance(value.func, ast.Name) and value.func.id == "len":
                    return "int"
                return _call_return(value, api_returns)
    return None


def _call_return(call: ast.Call, api_returns: Mapping[str, str]) -> str | None:
    return api_returns.get(call.func.id) if isinstance(call.func, ast.Name) else None


def call_statement(name: str, draft: HelperDraft, instance: Instance, varying: list[int],
                   output: int | None) -> ast.stmt:
    """The statement that replaces `instance`: `out = name(args)`, or a bare call."""
    args: list[ast.expr] = []
    if draft.parameters and draft.parameters[0] == "image":
        args.append(ast.Name(id="image", ctx=ast.Load()))
    args += [ast.Name(id=instance.variables[k], ctx=ast.Load()) for k in instance.inputs]
    args += [ast.Constant(value=instance.holes[k]) for k in varying]
    call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])
    if output is None:
        return ast.Expr(value=call)
    return ast.Assign(targets=[ast.Name(id=instance.variables[output], ctx=ast.Store())], value=call, lineno=0)


def rewrite(programs: Sequence[str], pattern: Pattern, name: str, draft: HelperDraft) -> dict[int, str]:
    """Each program holding an instance, with every non-overlapping instance replaced by a call."""
    varying, output = pattern.varying_holes(), pattern.output()
    by_program: dict[int, list[Instance]] = {}
    for instance in pattern.instances:
        by_program.setdefault(instance.program, []).append(instance)
    rewritten: dict[int, str] = {}
    for index, instances in by_program.items():
        tree = ast.parse(programs[index])
        fresh = find_patterns_in(tree, pattern.shape, instances)
        chosen: list[tuple[Instance, list[ast.stmt]]] = []
        claimed: set[int] = set()
        for instance, block in fresh:
            # statements only: the parser shares one `Load()` (and one `Mult()`) among all nodes
            ids = {id(n) for s in block[instance.start:instance.start + instance.length] for n in ast.walk(s)
                   if isinstance(n, ast.stmt)}
            if ids & claimed:
                continue
            claimed |= ids
            chosen.append((instance, block))
        for instance, block in sorted(chosen, key=lambda c: -c[0].start):
            block[instance.start:instance.start + instance.length] = [call_statement(name, draft, instance, varying, output)]
        rewritten[index] = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return rewritten


def find_patterns_in(tree: ast.Module, shape: str, instances: Sequence[Instance]) -> list[tuple[Instance, list[ast.stmt]]]:
    """The instances of `shape` re-found in a fresh parse of their program (blocks of `tree`)."""
    positions = {(i.start, i.length, ast.dump(i.block[i.start])) for i in instances}
    api = _api_names_in(instances)
    found = []
    for block in statement_blocks(tree):
        for start in range(len(block)):
            for length in range(1, min(MAX_RUN, len(block) - start) + 1):
                if (start, length, ast.dump(block[start])) not in positions:
                    continue
                found_shape, instance = normalise(tree, block, start, length, api, instances[0].program)
                if found_shape == shape and instance is not None:
                    found.append((instance, block))
    return found


def _api_names_in(instances: Sequence[Instance]) -> set[str]:
    """The names left fixed by normalisation: every called name that is not a variable of an instance."""
    names = set()
    for instance in instances:
        for s in instance.statements:
            names |= {n.id for n in ast.walk(s) if isinstance(n, ast.Name)} - set(instance.variables)
    return names


_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}


def silent_parameter(parameters: Sequence[str], docstring: str) -> str | None:
    """Why a docstring misdescribes its helper: it says nothing of one of the parameters.

    A helper of two objects documented as "the distance of `object1_prompt` from the camera" (it
    returned how much farther the first was than the second) invites its use for other questions;
    the Program agent reads only the name and the docstring. A parameter counts as mentioned by its
    name or by its name without `_prompt` (`reference_prompt` as "reference"); `bbox` counts as "box",
    and a numbered one by its ordinal (`bbox2` as "second box", `object1_prompt` as "first object").
    """
    text = docstring.lower().replace("_", " ").replace("bbox", "box")
    for parameter in parameters:
        if parameter == "image":
            continue
        words = parameter.lower().replace("_", " ").replace("bbox", "box")
        base = words.removesuffix(" prompt").removesuffix(" description").strip()
        numbered = re.fullmatch(r"([a-z ]*?)\s*([1-4])", base)
        ordinal = f"{_ORDINALS[int(numbered[2])]} {numbered[1].strip()}" if numbered else None
        if words not in text and base not in text and (ordinal is None or ordinal not in text):
            return (f"the docstring says nothing of `{parameter}`: say in one sentence what the helper returns "
                    "in terms of every parameter")
    return None


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


def unread_parameter(code: str) -> str | None:
    """Why a helper misleads: its body never reads one of its parameters, or None.

    `_count_objects_by_side(image, object_prompt, side)` returning `len(loc(image, object_prompt))`
    reproduces "How many black objects are there?" with any `side`, and its name promises a count
    on one side; a program that trusts the name answers every left/right count wrong.
    """
    try:
        node = next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef))
    except (SyntaxError, StopIteration):
        return None
    read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for parameter in [a.arg for a in node.args.args + node.args.kwonlyargs]:
        if parameter != "image" and parameter not in read:
            return (f"the body never reads `{parameter}`, so the helper does not do what its signature promises: "
                    f"compute with `{parameter}`, or drop it")
    return None


def with_formula(docstring: str, draft: HelperDraft) -> str:
    """The namer's sentence, completed by the body's return formula where it leaves a parameter out.

    A 1.5B namer writes "the depth difference between two bounding boxes" for
    `depth(image, bbox) - depth(image, bbox2)`; the formula says which box is subtracted from which.
    """
    if not docstring or silent_parameter(draft.parameters, docstring) is None:
        return docstring
    formula = return_formula(draft.body)
    return f"{docstring.rstrip()} Returns `{formula}`." if formula else docstring


def body_shape(body: str, api_names: set[str]) -> tuple[str, tuple[Any, ...]] | None:
    """`body` normalised as patterns are (variables numbered by first use) with its literals: two
    helpers with the same shape compute the same thing whatever their locals are called. None if
    it does not parse or cannot be normalised."""
    try:
        tree = ast.parse(textwrap.dedent(body))
    except SyntaxError:
        return None
    shape, instance = normalise(tree, tree.body, 0, len(tree.body), api_names, 0)
    return None if shape is None or instance is None else (shape, tuple(instance.holes))


def helper_body(code: str) -> str | None:
    """The statements of a stored helper after its docstring, as source."""
    try:
        node = next((n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)), None)
    except SyntaxError:
        return None
    if node is None:
        return None
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    return "\n".join(ast.unparse(s) for s in body)
