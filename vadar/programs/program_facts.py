"""What the call checks read from one program, gathered once: names bound and read, the kinds of
simply assigned names, and the problem record every check returns.

Kept apart from the checks themselves so that a check written in its own module (`chain_calls`)
reads the same facts and returns the same record as those in `call_checks`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from vadar.programs.call_signatures import CallableApi, CallSignature, Kind, annotation_kind
from vadar.text import clip

LOC = "loc"
"""The detection module's name, as programs call it: the checks that read which phrases it was asked."""

RESULT_NAME = "final_result"
"""The name a program stores its answer in: read by the sandbox, never by the program."""


@dataclass(frozen=True)
class CallProblem:
    """One call that cannot work, and what to tell the program's writer about it."""

    line: int
    check: str  # the check's name
    message: str


@dataclass(frozen=True)
class Value:
    """What a value is (its kind) and where it came from, in words for a message."""

    kind: Kind
    origin: str  # "from `_is_left_of` at line 3", "(`3`, line 2)"


@dataclass(frozen=True)
class ProgramFacts:
    """What the checks read from one program's syntax tree, gathered once."""

    tree: ast.Module
    api: CallableApi
    defined: frozenset[str]  # every name the program binds (assignments, defs, parameters, imports)
    read: frozenset[str]  # every name the program reads
    values: dict[str, Value] = field(default_factory=dict)  # names whose every binding agrees on a kind
    question: str = ""  # the question the program answers, where a check compares a call with it
    assignments: dict[str, list[ast.expr]] = field(default_factory=dict)  # `name = value` per name, in order

    def calls(self) -> Iterator[ast.Call]:
        return (node for node in ast.walk(self.tree) if isinstance(node, ast.Call))

    def signature(self, call: ast.Call) -> CallSignature | None:
        """The API signature a call is checked against; None for a function the program defines."""
        if not isinstance(call.func, ast.Name) or call.func.id in self.defined:
            return None
        return self.api.signatures.get(call.func.id)

    def value(self, node: ast.expr) -> Value | None:
        """The kind of `node` where the program makes it certain, else None."""
        where = f"line {node.lineno}"
        if isinstance(node, ast.Constant):
            kind = _CONSTANT_KINDS.get(type(node.value))
            return Value(kind, f"(`{clip(repr(node.value), 40)}`, {where})") if kind else None
        if isinstance(node, ast.List | ast.Tuple) and len(node.elts) != 4 and not starred(node.elts):
            return Value(Kind.LIST, f"of {len(node.elts)} items ({where})")
        if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            return Value(Kind.BOOL, f"(a comparison, {where})")
        if isinstance(node, ast.Name):
            return self.values.get(node.id)
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and type(node.slice.value) is int and (listed := self.value(node.value)) is not None
                and listed.kind is Kind.BOXES):  # `loc(image, "cube")[0]`: one box of a list of boxes
            return Value(Kind.BOX, f"(item {node.slice.value} of a list of boxes {listed.origin})")
        if isinstance(node, ast.Call) and (signature := self.signature(node)) is not None:
            kind = annotation_kind(signature.returns)
            return Value(kind, f"from `{signature.name}` at {where}") if kind else None
        return None


Check = Callable[[ProgramFacts], list[CallProblem]]


def program_facts(tree: ast.Module, api: CallableApi, question: str = "") -> ProgramFacts:
    """Read the names a program binds and reads, and the kinds of its simply assigned names."""
    stores: dict[str, int] = {}
    other: set[str] = set()  # bound otherwise than by `name = value`
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                read.add(node.id)
            else:
                stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            other.add(node.name)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
    simple = _simple_assignments(tree)
    facts = ProgramFacts(tree, api, frozenset(stores.keys() | other), frozenset(read), question=question,
                         assignments=simple)
    for name, assigned in simple.items():  # in the order the program first assigns them
        if name in other or stores.get(name) != len(assigned):
            continue
        values = [facts.value(node) for node in assigned]
        first = values[0]
        if first is not None and all(v is not None and v.kind == first.kind for v in values):
            facts.values[name] = first
    return facts


def _simple_assignments(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """`name = value` (and `name: T = value`, `name := value`) per name, in source order."""
    found: list[tuple[int, int, str, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.append((node.lineno, node.col_offset, node.targets[0].id, node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            found.append((node.lineno, node.col_offset, node.target.id, node.value))
        elif isinstance(node, ast.NamedExpr):
            found.append((node.lineno, node.col_offset, node.target.id, node.value))
    simple: dict[str, list[ast.expr]] = {}
    for _, _, name, value in sorted(found, key=lambda item: item[:2]):
        simple.setdefault(name, []).append(value)
    return simple


_CONSTANT_KINDS: dict[type, Kind] = {bool: Kind.BOOL, int: Kind.NUMBER, float: Kind.NUMBER, str: Kind.STRING}


def starred(elements: Sequence[ast.expr]) -> bool:
    return any(isinstance(e, ast.Starred) for e in elements)


def call_text(call: ast.Call, limit: int = 70) -> str:
    return clip(ast.unparse(call), limit)


def arguments(call: ast.Call, signature: CallSignature) -> Iterator[tuple[str, ast.expr]]:
    """(parameter, argument) for each argument whose parameter is certain."""
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return
        parameter = signature.positional(index)
        if parameter is not None:
            yield parameter, argument
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg in signature.parameters:
            yield keyword.arg, keyword.value
