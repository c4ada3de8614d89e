"""What a stored library function may be: exactly one plain `def`, nothing that runs early.

A helper's source is executed before every program that has it in its namespace, whether or not
the program calls it. Anything evaluated at definition time (decorators, default values, other
top-level statements) would therefore run ahead of every program and could rebind a module or
`final_result`. So a library function is one `def` named as stored, without decorators, with
constant defaults, and without `global` statements (a helper cannot rebind the program's names
when called either). Checked when a helper is stored and again in the worker when it is loaded; `check_library_policy`
also compiles it under the program policy, as the worker will before every program.
Standard library and the sandbox policy only: the sandbox worker imports this module.
"""

from __future__ import annotations

import ast

from vadar.sandbox.policy import PolicyError, compile_program

MAX_SOURCE_CHARS = 100_000
"""Longest helper source accepted (the same bound as an LLM reply)."""


class LibrarySourceError(ValueError):
    """The source is not one plain `def` of the expected name; the message says what is wrong."""

    def __init__(self, message: str, lineno: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.lineno = lineno


def _constant(node: ast.expr) -> bool:
    """A literal constant, or a signed number (`-1`, `+0.5`)."""
    if isinstance(node, ast.Constant):
        return True
    return (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float, complex))


def check_library_source(name: str, source: str) -> None:
    """Raise `LibrarySourceError` unless `source` is exactly one plain `def name(...)`."""
    if not isinstance(source, str) or len(source) > MAX_SOURCE_CHARS:
        raise LibrarySourceError(f"library function {name}: its source must be text of at most "
                                 f"{MAX_SOURCE_CHARS} characters")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise LibrarySourceError(f"library function {name} does not parse: {exc}",
                                 getattr(exc, "lineno", None)) from None
    if len(tree.body) != 1 or type(tree.body[0]) is not ast.FunctionDef:
        lineno = tree.body[1].lineno if len(tree.body) > 1 else (tree.body[0].lineno if tree.body else None)
        raise LibrarySourceError(f"library function {name} must be exactly one `def` and nothing "
                                 "else at top level", lineno)
    node = tree.body[0]
    if node.name != name:
        raise LibrarySourceError(f"library function {name} defines `{node.name}` instead", node.lineno)
    if node.decorator_list:
        raise LibrarySourceError(f"library function {name}: decorators are not allowed",
                                 node.decorator_list[0].lineno)
    defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    for default in defaults:
        if not _constant(default):
            raise LibrarySourceError(f"library function {name}: default values must be constants "
                                     f"(numbers, text, True/False/None)", default.lineno)
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Global, ast.Nonlocal)):
            raise LibrarySourceError(f"library function {name}: `global` and `nonlocal` are not allowed",
                                     inner.lineno)


def check_library_policy(name: str, source: str) -> None:
    """Raise `LibrarySourceError` unless `source` compiles under the program policy.

    A helper that breaks it (`return ().__class__`) would fail every program that has it in its
    namespace, called or not: the worker compiles all of them first.
    """
    try:
        compile_program(source, f"<library {name}>")
    except PolicyError as exc:
        raise LibrarySourceError(f"library function {name} breaks the sandbox policy: {exc.message}",
                                 exc.lineno) from None
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise LibrarySourceError(f"library function {name} does not compile: {exc}",
                                 getattr(exc, "lineno", None)) from None
