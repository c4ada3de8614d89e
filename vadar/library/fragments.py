"""Recurring sub-computations of programs: statement runs equal up to variable names and literals.

Anti-unification over the AST. Every run of 1 to `MAX_RUN` consecutive statements of a block is
normalised: variables become `v0, v1, ...` in order of first appearance, every literal string or
number becomes a hole. Runs with the same normal form across programs are instances of one
pattern; a hole whose literal differs between instances becomes a parameter, one equal in all
stays a literal. Variables read before the run writes them are parameters too, and the one
variable the rest of the program reads afterwards (or `final_result`) is the return value. The
pattern then reads as a helper, and each instance can be replaced by a call (`vadar.library.drafting`),
which is what lets admission check that every rewritten program still answers the same (see
`vadar.library.distill`).
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import textwrap
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from vadar.programs.formula import alias_of, return_formula

MAX_RUN = 8  # a whole short program (two locs, two depths, a difference, the answer) is one run
RESULT = "final_result"
BUILTIN_NAMES = frozenset(dir(builtins)) | {"math"}
_JUMPS = (ast.Return, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom,
          ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Yield, ast.YieldFrom)


def code_tokens(source: str) -> int:
    """Python tokens in `source` (names, operators, literals): the size a program costs to write."""
    try:
        return sum(1 for t in tokenize.generate_tokens(io.StringIO(source).readline)
                   if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                     tokenize.COMMENT, tokenize.ENDMARKER))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return len(source.split())


@dataclass
class Instance:
    """One occurrence of a pattern: `length` statements of `block` from `start`, in program `program`."""

    program: int
    block: list[ast.stmt]
    start: int
    length: int
    variables: list[str]  # original names of v0, v1, ...
    holes: list[Any]  # the literals, in order
    inputs: list[int]  # indices of variables read before written
    outputs: set[int]  # indices of variables the program reads after the run (or final_result)

    @property
    def statements(self) -> list[ast.stmt]:
        return self.block[self.start:self.start + self.length]

    @property
    def source(self) -> str:
        return "\n".join(ast.unparse(s) for s in self.statements)


@dataclass
class Pattern:
    """Instances of one normal form across programs, and what varies between them."""

    shape: str
    instances: list[Instance] = field(default_factory=list)

    @property
    def programs(self) -> set[int]:
        return {i.program for i in self.instances}

    def varying_holes(self) -> list[int]:
        """Holes whose literal is not the same in every instance: each becomes a parameter.

        Two holes that hold equal literals in every instance are one parameter (the first of
        them): `vqa(image, q, a) == vqa(image, q, b)` asks one question twice.
        """
        return sorted(set(self.parameter_of().values()))

    def parameter_of(self) -> dict[int, int]:
        """Each varying hole -> the hole whose parameter it uses."""
        first = self.instances[0].holes
        varying = [k for k in range(len(first)) if any(i.holes[k] != first[k] for i in self.instances[1:])]
        alias: dict[int, int] = {}
        for k in varying:
            alias[k] = next((j for j in varying if j < k and alias[j] == j
                             and all(i.holes[j] == i.holes[k] for i in self.instances)), k)
        return alias

    def output(self) -> int | None:
        """The variable the helper returns; None when no instance reads anything afterwards."""
        outputs = set().union(*(i.outputs for i in self.instances))
        return next(iter(outputs)) if len(outputs) == 1 else None

    def usable(self) -> bool:
        outputs = set().union(*(i.outputs for i in self.instances))
        inputs = {tuple(i.inputs) for i in self.instances}
        return len(outputs) <= 1 and len(inputs) == 1


def find_patterns(programs: Sequence[str], api_names: set[str], *, min_programs: int) -> list[Pattern]:
    """Patterns that occur in at least `min_programs` distinct programs and call the API twice or loop."""
    by_shape: dict[str, Pattern] = {}
    for index, source in enumerate(programs):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        local = _comprehension_locals([tree])  # once per program, not once per run
        for block in statement_blocks(tree):
            for start in range(len(block)):
                for length in range(1, min(MAX_RUN, len(block) - start) + 1):
                    run = block[start:start + length]
                    if not _worth_a_helper(run, api_names):
                        continue
                    shape, instance = normalise(tree, block, start, length, api_names, index, local)
                    if shape is not None and instance is not None:
                        by_shape.setdefault(shape, Pattern(shape)).instances.append(instance)
    patterns = [_consistent_part(p) for p in by_shape.values()]
    return [p for p in patterns if len(p.programs) >= min_programs and p.usable()]


def _consistent_part(pattern: Pattern) -> Pattern:
    """The instances that agree on inputs and on the one variable read afterwards (the most programs).

    `x = loc(...)[0]; d = depth(image, x)` reads as "the depth of the first match" where only `d`
    is used later, and as something else where `x` is used too; those instances are left out.
    """
    groups: dict[tuple[Any, ...], list[Instance]] = {}
    for instance in pattern.instances:
        if len(instance.outputs) <= 1:
            groups.setdefault((tuple(instance.inputs), tuple(sorted(instance.outputs))), []).append(instance)
    if not groups:
        return Pattern(pattern.shape)
    best = max(groups.values(), key=lambda group: len({i.program for i in group}))
    return Pattern(pattern.shape, best)


def statement_blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _worth_a_helper(run: Sequence[ast.stmt], api_names: set[str]) -> bool:
    nodes = [n for s in run for n in ast.walk(s)]
    if any(isinstance(n, _JUMPS) for n in nodes):
        return False
    calls = sum(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in api_names for n in nodes)
    loops = any(isinstance(n, ast.For | ast.While | ast.ListComp | ast.GeneratorExp) for n in nodes)
    return calls >= 2 or (calls >= 1 and loops)


def normalise(tree: ast.Module, block: list[ast.stmt], start: int, length: int, api_names: set[str],
               program: int, local: set[int] | None = None) -> tuple[str | None, Instance | None]:
    """The run's normal form and instance; `local` is `_comprehension_locals([tree])` when the caller
    normalises many runs of one tree (computed here otherwise)."""
    run = block[start:start + length]
    fixed = api_names | BUILTIN_NAMES | {"image"}
    order: list[str] = []
    first_use: dict[str, str] = {}
    holes: list[Any] = []

    copies = [copy.deepcopy(s) for s in run]
    bound_inside = _comprehension_locals(copies)

    class Normaliser(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in fixed and node.id != RESULT:
                return node
            if node.id not in order:
                order.append(node.id)
            if node.id not in first_use and id(node) not in bound_inside:  # `box` of `[box for box in ...]`
                first_use[node.id] = "load" if isinstance(node.ctx, ast.Load) else "store"
            return ast.copy_location(ast.Name(id=f"v{order.index(node.id)}", ctx=node.ctx), node)

        def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
            target = node.target
            if isinstance(target, ast.Name) and target.id not in first_use and target.id not in fixed:
                first_use[target.id] = "load"  # x += 1 reads x first
                if target.id not in order:
                    order.append(target.id)
            return self.generic_visit(node)

        def visit_Constant(self, node: ast.Constant) -> ast.AST:
            if isinstance(node.value, bool) or not isinstance(node.value, str | int | float):
                return node
            holes.append(node.value)
            return ast.copy_location(ast.Name(id=f"h{len(holes) - 1}", ctx=ast.Load()), node)

    stored = {n.id for s in run for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if any(name in fixed and name != RESULT for name in stored):
        return None, None  # the run rebinds a module or builtin (`for depth in ...`): no helper can
    normal = [Normaliser().visit(s) for s in copies]
    if RESULT in first_use and first_use[RESULT] == "load":
        return None, None
    inside = {id(n) for s in run for n in ast.walk(s)}
    local = _comprehension_locals([tree]) if local is None else local
    read_later = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                  and id(n) not in inside and id(n) not in local}
    handed_on = {n.id for s in run for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                 and id(n) not in local}
    outputs = {order.index(v) for v in handed_on if v in read_later or v == RESULT}
    inputs = [k for k, v in enumerate(order) if first_use.get(v) == "load"]
    shape = "\n".join(ast.dump(s, annotate_fields=False) for s in normal)
    return shape, Instance(program, block, start, length, order, holes, inputs, outputs)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _comprehension_locals(nodes: Sequence[ast.AST]) -> set[int]:
    """The ids of the Name nodes a comprehension binds (`box` in `[box for box in boxes]`): Python
    scopes them to the comprehension, so the run neither reads them from outside nor hands them on.
    The first generator's iterable is evaluated outside and is left out."""
    local: set[int] = set()
    for root in nodes:
        for comp in (n for n in ast.walk(root) if isinstance(n, _COMPREHENSIONS)):
            bound = {t.id for g in comp.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
            outside = {id(n) for n in ast.walk(comp.generators[0].iter)}
            local |= {id(n) for n in ast.walk(comp) if isinstance(n, ast.Name) and n.id in bound
                      and id(n) not in outside}
    return local


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


def library_twins(library: Sequence[Any], api_names: set[str]) -> Callable[[str], str | None]:
    """What finds the library helper a new helper's body repeats, its straight-line locals inlined and
    its names numbered by first use, or the one it only calls under a second name (None when it is
    new); the library's bodies are read once. A build admitted `_count_matching_objects` beside its
    `_count_matching`, and `_depth_difference_between` beside `_depth_difference`, each the same
    body: twins split the programs, and the evidence, between them."""

    def shape(text: str) -> tuple[str, tuple[Any, ...]] | None:
        formula = return_formula(text)
        return body_shape(f"return {formula}" if formula else text, api_names)

    shapes = [(f.name, shape(helper_body(f.code) or "")) for f in library if f.code]
    names = {f.name for f in library}

    def twin(body: str) -> str | None:
        own = shape(body)
        found = next((name for name, known in shapes if own is not None and known == own), None)
        return found or alias_of(body, names)

    return twin
