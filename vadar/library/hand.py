"""Add hand-written helpers to a library: a Python file of `def _name(...)` with docstrings.

Used to seed a library, and to measure the headroom a correct library gives the Program agent
(`benchmarks/hand_library/clevr.py`). Each function is parsed, proposed, implemented and
recorded as admitted by hand, so it shows in prompts like a learned one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from api_store import ApiStore
from vadar.library.gate import admit_as_given
from vadar.programs.calls import called_names
from vadar.programs.helper_rules import HelperRuleError, check_helper, joining_problem, name_problem, stored_calls


class HandLibraryError(ValueError):
    """The file holds no usable helper, or a helper lacks its docstring or breaks a helper rule
    (`vadar.programs.helper_rules`: its name, its size, the sandbox policy)."""


@dataclass(frozen=True)
class HandFunction:
    name: str
    signature: str
    docstring: str
    code: str
    dependencies: tuple[str, ...]  # the functions of the same source it calls
    calls: frozenset[str]  # every name its code calls, for the library-wide rules (no cycle)


def parse_functions(source: str) -> list[HandFunction]:
    """Every top-level function of `source`, in order; each needs a `_` name and a docstring."""
    try:
        tree = ast.parse(source)
    except (ValueError, RecursionError, MemoryError) as exc:  # SyntaxError says its line itself
        raise HandLibraryError(f"the file cannot be read as Python ({type(exc).__name__}: {exc})") from None
    defs = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if not defs:
        raise HandLibraryError("no function definitions found")
    others = [node for node in tree.body if not isinstance(node, ast.FunctionDef)
              and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    if others:
        raise HandLibraryError(f"line {others[0].lineno}: only `def` statements (and a docstring) may "
                               "stand at top level; they would run before every program")
    names = {node.name for node in defs}
    functions = []
    for node in defs:
        docstring = ast.get_docstring(node)
        problem = name_problem(node.name)
        if problem is not None:
            raise HandLibraryError(f"line {node.lineno}: {problem}")
        if not docstring:
            raise HandLibraryError(f"`{node.name}` has no docstring; the LLM reads it to use the function")
        if node.decorator_list:
            raise HandLibraryError(f"`{node.name}`: decorators are not allowed in library functions")
        code = ast.get_source_segment(source, node) + "\n"
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        signature = f"({ast.unparse(node.args)}){returns}"
        try:
            check_helper(node.name, signature, docstring, code)
        except HelperRuleError as exc:
            raise HandLibraryError(f"line {node.lineno}: {exc}") from None
        called = called_names(code)
        functions.append(HandFunction(node.name, signature, docstring, code,
                                      tuple(sorted((called & names) - {node.name})), frozenset(called)))
    return functions


def add_functions(store: ApiStore, source: str) -> list[str]:
    """Propose, implement and admit each function of `source`; returns their names."""
    functions = parse_functions(source)
    adding = {f.name: set(f.calls) for f in functions}
    problem = joining_problem(stored_calls(store.functions(include_failed=True), excluding=adding), adding)
    if problem is not None:  # the rules an import and the API agent keep: size, no recursion, no cycle
        raise HandLibraryError(problem)
    with store.transaction():
        for function in functions:
            store.propose(function.name, function.signature, function.docstring)
        for function in functions:
            store.implement(function.name, function.code, dependencies=list(function.dependencies))
        admit_as_given(store, [f.name for f in functions], mode="hand")
    return [f.name for f in functions]
