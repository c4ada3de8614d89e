"""Programs rewritten to call a drafted helper: every non-overlapping instance of its pattern
replaced by one call, found again in a fresh parse of each program.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from vadar.library.drafting import HelperDraft
from vadar.library.fragments import MAX_RUN, Instance, Pattern, normalise, statement_blocks


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
