"""Recurring sub-computations of programs: statement runs equal up to variable names and literals.

Anti-unification over the AST. Every run of 1 to `MAX_RUN` consecutive statements of a block is
normalised: variables become `v0, v1, ...` in order of first appearance, every literal string or
number becomes a hole. Runs with the same normal form across programs are instances of one
pattern; a hole whose literal differs between instances becomes a parameter, one equal in all
stays a literal. Variables read before the run writes them are parameters too, and the one
variable the rest of the program reads afterwards (or `final_result`) is the return value. The
pattern then reads as a helper (`helper_source`), and each instance can be replaced by a call
(`rewrite`), which is what lets admission check that every rewritten program still answers the
same (see `vadar.library.distill`).
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import keyword
import tokenize
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_RUN = 4
RESULT = "final_result"
_BUILTINS = frozenset(dir(builtins)) | {"math"}
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
        for block in _blocks(tree):
            for start in range(len(block)):
                for length in range(1, min(MAX_RUN, len(block) - start) + 1):
                    run = block[start:start + length]
                    if not _worth_a_helper(run, api_names):
                        continue
                    shape, instance = _normalise(tree, block, start, length, api_names, index)
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


def _blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
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


def _normalise(tree: ast.Module, block: list[ast.stmt], start: int, length: int, api_names: set[str],
               program: int) -> tuple[str | None, Instance | None]:
    run = block[start:start + length]
    fixed = api_names | _BUILTINS | {"image"}
    order: list[str] = []
    first_use: dict[str, str] = {}
    holes: list[Any] = []

    class Normaliser(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in fixed and node.id != RESULT:
                return node
            if node.id not in first_use:
                first_use[node.id] = "load" if isinstance(node.ctx, ast.Load) else "store"
                order.append(node.id)
            return ast.copy_location(ast.Name(id=f"v{order.index(node.id)}", ctx=node.ctx), node)

        def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
            target = node.target
            if isinstance(target, ast.Name) and target.id not in first_use and target.id not in fixed:
                first_use[target.id] = "load"  # x += 1 reads x first
                order.append(target.id)
            return self.generic_visit(node)

        def visit_Constant(self, node: ast.Constant) -> ast.AST:
            if isinstance(node.value, bool) or not isinstance(node.value, str | int | float):
                return node
            holes.append(node.value)
            return ast.copy_location(ast.Name(id=f"h{len(holes) - 1}", ctx=ast.Load()), node)

    normal = [Normaliser().visit(copy.deepcopy(s)) for s in run]
    if RESULT in first_use and first_use[RESULT] == "load":
        return None, None
    inside = {id(n) for s in run for n in ast.walk(s)}
    read_later = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                  and id(n) not in inside}
    stored = {n.id for s in run for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    outputs = {order.index(v) for v in stored if v in read_later or v == RESULT}
    inputs = [k for k, v in enumerate(order) if first_use[v] == "load"]
    shape = "\n".join(ast.dump(s, annotate_fields=False) for s in normal)
    return shape, Instance(program, block, start, length, order, holes, inputs, outputs)


@dataclass(frozen=True)
class HelperDraft:
    """A pattern as a helper: parameters, body source and the call each instance is replaced by."""

    parameters: list[str]
    annotations: dict[str, str]
    returns: str | None
    body: str
    has_output: bool

    def source(self, name: str, docstring: str) -> str:
        params = ", ".join(f"{p}: {self.annotations[p]}" if p in self.annotations else p for p in self.parameters)
        returns = f" -> {self.returns}" if self.returns else ""
        doc = docstring.strip().replace('"""', "'''")
        body = "\n".join("    " + line for line in self.body.splitlines())
        return f'def {name}({params}){returns}:\n    """{doc}"""\n{body}\n'

    def signature(self) -> str:
        params = ", ".join(f"{p}: {self.annotations[p]}" if p in self.annotations else p for p in self.parameters)
        return f"({params})" + (f" -> {self.returns}" if self.returns else "")


def draft_helper(pattern: Pattern, api_params: Mapping[str, list[tuple[str, str]]],
                 api_returns: Mapping[str, str]) -> HelperDraft:
    """The helper a pattern reads as, named after the first instance's variables and the API's parameters."""
    first = pattern.instances[0]
    varying = pattern.varying_holes()
    output = pattern.output()
    taken = set(api_params) | _BUILTINS | {"image", RESULT}
    names: dict[str, str] = {}  # placeholder -> readable name
    annotations: dict[str, str] = {}
    statements = [copy.deepcopy(s) for s in first.statements]
    for k, original in enumerate(first.variables):
        names[f"v{k}"] = _fresh("result" if original == RESULT else original, taken)
    hole_context = _hole_context(statements, api_params)
    for k in varying:
        label, annotation = hole_context.get(k, ("value", type(first.holes[k]).__name__))
        names[f"h{k}"] = _fresh(label, taken)
        annotations[names[f"h{k}"]] = annotation
    alias = pattern.parameter_of()
    for k, representative in alias.items():
        names[f"h{k}"] = names[f"h{representative}"]

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
        kind = _argument_type(body, names[f"v{k}"], api_params)
        if kind:
            annotations[names[f"v{k}"]] = kind
    returns = None
    text = "\n".join(ast.unparse(s) for s in body)
    if output is not None:
        text += f"\nreturn {names[f'v{output}']}"
        returns = _assigned_type(body, names[f"v{output}"], api_returns)
    return HelperDraft(parameters, annotations, returns, text, output is not None)


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


def _argument_type(body: list[ast.stmt], name: str, api_params: Mapping[str, list[tuple[str, str]]]) -> str | None:
    for s in body:
        for node in ast.walk(s):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in api_params:
                for position, arg in enumerate(node.args):
                    if isinstance(arg, ast.Name) and arg.id == name and position < len(api_params[node.func.id]):
                        return api_params[node.func.id][position][1]
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
            ids = {id(n) for s in block[instance.start:instance.start + instance.length] for n in ast.walk(s)}
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
    for block in _blocks(tree):
        for start in range(len(block)):
            for length in range(1, min(MAX_RUN, len(block) - start) + 1):
                if (start, length, ast.dump(block[start])) not in positions:
                    continue
                found_shape, instance = _normalise(tree, block, start, length, api, instances[0].program)
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
