"""Which helpers a program calls: one answer, read from the program's syntax tree.

A helper is called when the program holds a call of its bare name (`_left_of(a, b)`); a longer
name that ends the same (`_objects_left_of(`) or an attribute (`obj._left_of(`) is not a call of
it. Every question of the kind ("which helpers did these programs use", "what does this helper
depend on", "which candidates did this program reach") is answered here, so no caller matches
text.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence

from vadar.programs.stubs import StubFormatError, parse_bounded


def called_names(source: str) -> set[str]:
    """Names called as plain functions in `source`; `StubFormatError` when it does not parse."""
    return _called(parse_bounded(source))


def _called(tree: ast.AST) -> set[str]:
    return {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def undefined_helpers_called(source: str) -> set[str]:
    """`_`-named functions `source` calls without defining them: the helpers it takes from a library
    (any library, when its names are not known); `StubFormatError` when it does not parse."""
    tree = parse_bounded(source)
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    return {name for name in _called(tree) if name.startswith("_") and name not in defined}


def helpers_called(program: str | None, names: Iterable[str]) -> set[str]:
    """Which of `names` the program calls directly; a program that does not parse calls nothing."""
    if not program:
        return set()
    try:
        return called_names(program) & set(names)
    except StubFormatError:
        return set()


def helpers_reached(program: str | None, dependencies: Mapping[str, Sequence[str]]) -> set[str]:
    """Helpers of `dependencies` (name -> the helpers it calls) the program calls, directly or
    through the helpers it calls."""
    pending = list(helpers_called(program, dependencies))
    reached: set[str] = set()
    while pending:
        name = pending.pop()
        if name in dependencies and name not in reached:
            reached.add(name)
            pending += list(dependencies[name])
    return reached
