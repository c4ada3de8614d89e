"""A pattern as a helper: its parameters, body and signature (`rewriting` then rewrites programs to call it).

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
from collections.abc import Mapping
from dataclasses import dataclass

from vadar.library.fragments import BUILTIN_NAMES, RESULT, Pattern


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
    _rename_use_locals(pattern, names, taken, api_returns)

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


def _rename_use_locals(pattern: Pattern, names: dict[str, str], taken: set[str],
                       api_returns: Mapping[str, str]) -> None:
    """A local the uses spell differently (`table_depth`, `stool_depth`) is named after the
    parameter it comes from (`bbox_depth`), not after the first use's object; one no parameter's
    word is in (`matte_spheres` from 'matte sphere', `cylinders` in another use) gets a neutral name
    after what it holds (`matches`): asked to name a body that kept `matte_spheres`, the model
    answered `_find_matte_spheres` four times out of four."""
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
        if renamed == original:
            renamed = _NEUTRAL.get(_assigned_type(first.statements, original, api_returns) or "", "value")
        names[f"v{k}"] = _fresh(renamed, taken)


_NEUTRAL = {"BBox": "match", "list[BBox]": "matches", "int": "count", "float": "measure", "bool": "flag", "str": "answer"}
"""Names for a local the uses spell differently, after the type it holds."""


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
    """The type of `name` after its last assignment: `yellow = _objects_left_of(...)` then `yellow =
    yellow[0]` is one box. Typed by the first, a 100-question CLEVR build's distilled
    `_find_objects_left_of` promised `list[BBox]` and returned one box."""
    typed: str | None = None
    for s in body:
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets):
            typed = _value_type(s.value, name, typed, api_returns)
    return typed


def _value_type(value: ast.expr, name: str, before: str | None, api_returns: Mapping[str, str]) -> str | None:
    """The type of an assigned value; `before` is the type `name` had until then."""
    if isinstance(value, ast.Subscript) and not isinstance(value.slice, ast.Slice):  # one item, not a range
        listed = (_call_return(value.value, api_returns) if isinstance(value.value, ast.Call)
                  else before if isinstance(value.value, ast.Name) and value.value.id == name else None)
        return listed[5:-1] if listed and listed.startswith("list[") else None
    if isinstance(value, ast.Call):
        if isinstance(value.func, ast.Name) and value.func.id == "len":
            return "int"
        return _call_return(value, api_returns)
    if isinstance(value, ast.ListComp) and len(value.generators) == 1:
        return _filtered_list(value, api_returns)
    return None


def _filtered_list(comp: ast.ListComp, api_returns: Mapping[str, str]) -> str | None:
    """`[box for box in loc(image, p) if ...]` keeps items of the list it filters: the same type."""
    generator = comp.generators[0]
    if not (isinstance(comp.elt, ast.Name) and isinstance(generator.target, ast.Name)
            and comp.elt.id == generator.target.id and isinstance(generator.iter, ast.Call)):
        return None
    returned = _call_return(generator.iter, api_returns)
    return returned if returned and returned.startswith("list[") else None


def _call_return(call: ast.Call, api_returns: Mapping[str, str]) -> str | None:
    return api_returns.get(call.func.id) if isinstance(call.func, ast.Name) else None
