"""Strict parsing of function stubs and implementations written by the LLM.

The Signature agent answers with Python stubs (`def _name(params) -> ret:` plus a docstring and
no body); the API agent answers with one implementation. Both are parsed with `ast`, so malformed
output becomes a precise message fed back to the LLM instead of a crash.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from api_store import normalize_name
from vadar.programs.code_extract import NoCodeError, extract_code


class StubFormatError(ValueError):
    """The reply does not hold well-formed stubs or implementation; the message is for the LLM."""


@dataclass(frozen=True)
class Stub:
    """A proposed function: name, `(params) -> ret` signature text, docstring."""

    name: str
    signature: str
    docstring: str


normalized_name = normalize_name
"""Names that differ only in case or underscores are the same function (the store's rule)."""


def parse_stubs(reply: str) -> list[Stub]:
    """All top-level stubs of the reply; raises `StubFormatError` when there are none or any is bad."""
    tree = _parse(reply)
    stubs: list[Stub] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            docstring = ast.get_docstring(node)
            if not docstring:
                raise StubFormatError(f"line {node.lineno}: `{node.name}` has no docstring; every stub needs one")
            stubs.append(Stub(node.name, _signature_text(node), docstring.strip()))
        elif not _is_harmless(node):
            raise StubFormatError(
                f"line {node.lineno}: only `def` stubs are allowed at the top level, found {type(node).__name__}"
            )
    if not stubs:
        raise StubFormatError("no function stubs found; answer with `def _name(...) -> type:` stubs with docstrings")
    return stubs


def parse_implementation(reply: str, expected_name: str) -> str:
    """The source of the one function `expected_name` in the reply, without anything else."""
    tree = _parse(reply)
    source = extract_code(reply)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    match = [n for n in functions if n.name == expected_name]
    if not match:
        found = ", ".join(n.name for n in functions) or "no function"
        raise StubFormatError(f"the reply must define `{expected_name}`; it defines {found}")
    node = match[-1]
    if not _has_body(node):
        raise StubFormatError(f"`{expected_name}` has no body: the reply repeats the signature and docstring and "
                              "stops; write the code that does what the docstring says after the docstring")
    lines = source.splitlines()
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    return "\n".join(lines[start:node.end_lineno]).rstrip() + "\n"


def _has_body(node: ast.FunctionDef) -> bool:
    """Whether a function does anything beyond its docstring, `pass` and `...`: 3 of 4 samples of a
    CLEVR build's `_attribute_of_same` re-typed its long docstring and stopped (328 tokens each), ran
    (returning None) and went on to be judged by the build questions' programs."""
    statements = node.body[1:] if ast.get_docstring(node) is not None else node.body
    return any(not isinstance(s, ast.Pass) and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
               for s in statements)


MAX_NESTING = 100
"""Deepest syntax tree accepted from the LLM; `ast.unparse` and `compile` recurse per level."""


def parse_bounded(code: str) -> ast.Module:
    """`ast.parse` for untrusted text: deep or huge input is a `StubFormatError`, never a crash."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise StubFormatError(f"line {exc.lineno}: syntax error: {exc.msg}") from exc
    except (RecursionError, MemoryError, ValueError) as exc:  # ValueError: NUL bytes
        raise StubFormatError(f"the code cannot be read ({type(exc).__name__}); write simpler code") from None
    stack: list[tuple[ast.AST, int, int | None]] = [(tree, 0, None)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > MAX_NESTING:
            where = f"line {line}: " if line else ""
            raise StubFormatError(f"{where}expression nested more than {MAX_NESTING} levels deep; write simpler code")
        stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))
    return tree


def _parse(reply: str) -> ast.Module:
    try:
        code = extract_code(reply)
    except NoCodeError as exc:
        raise StubFormatError(str(exc)) from exc
    return parse_bounded(code)


def _signature_text(node: ast.FunctionDef) -> str:
    try:
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        return f"({ast.unparse(node.args)}){returns}"
    except (RecursionError, MemoryError) as exc:  # depth is checked first; this is a last guard
        raise StubFormatError(f"line {node.lineno}: the signature of `{node.name}` is too complex") from exc


def _is_harmless(node: ast.stmt) -> bool:
    """Comments vanish in the AST; stray string literals and `import math` lines are tolerated."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True
    return isinstance(node, ast.Import | ast.ImportFrom)
