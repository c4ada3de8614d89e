"""The restricted-execution policy: what generated code may write and what it can reach.

Compile-time rules come from RestrictedPython's transformer, loosened in one place: names with a
single leading underscore are allowed, because the generated API's helpers are called
`_find_left_object` and the like. Dunder names, names that could rebind the guards
(`_getattr_`, `_print`, ...), every attribute starting with `_`, imports outside a small whitelist
and class definitions stay forbidden. Run-time rules are the guard functions and the builtins
dict handed to the program; `build_globals` makes a fresh set for every execution.
"""

from __future__ import annotations

import ast
import collections
import functools
import itertools
import math
import operator
import re
import statistics
import types
from collections.abc import Callable
from typing import Any

from RestrictedPython import compile_restricted_exec
from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safer_getattr_raise,
)
from RestrictedPython.transformer import FORBIDDEN_FUNC_NAMES, IOPERATOR_TO_STR, RestrictingNodeTransformer

from vadar.sandbox.printing import PrintCollector

RESERVED_NAME = re.compile(r"^_.*_$|^_print$|^_tmp\d+$")
"""Underscore names the transformer itself emits; programs must not define or shadow them."""


class PolicyError(Exception):
    """A program breaks the policy; carries the offending line."""

    def __init__(self, filename: str, lineno: int | None, message: str) -> None:
        super().__init__(message)
        self.filename = filename
        self.lineno = lineno
        self.message = message


CLASS_WALKS = frozenset({"mro"})
"""Public attributes that walk a class hierarchy (`ValueError.mro()[-1]` is `object`)."""


class ProgramPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy, allowing `_single_underscore` names for definitions and calls."""

    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        if name is None:
            return
        if name.startswith("__"):
            self.error(node, f'"{name}" is an invalid name because it starts with "__"')
        elif name != "_" and RESERVED_NAME.match(name):
            self.error(node, f'"{name}" is a reserved name')
        elif name.startswith("_"):
            return  # a private helper such as `_find_left_object`
        else:
            super().check_name(node, name, allow_magic_methods)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr in CLASS_WALKS:
            self.error(node, f'"{node.attr}" is a restricted name: it leads from a class to `object`')
        return super().visit_Attribute(node)

    def check_import_names(self, node: ast.Import | ast.ImportFrom) -> ast.AST:
        if isinstance(node, ast.ImportFrom) and node.level:
            self.error(node, "relative imports are not allowed")
        for alias in node.names:
            if alias.name.startswith("_") or "._" in alias.name:
                self.error(node, f'importing "{alias.name}" is not allowed')
        return super().check_import_names(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        """Drop annotations: they would be evaluated at definition time (`image: Image` would
        need a name programs do not have) and mean nothing at run time."""
        _strip_annotations(node.args)
        node.returns = None
        return super().visit_FunctionDef(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        """`x: float = v` is `x = v`; a bare `x: float` does nothing."""
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        assign = ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)
        return self.visit_Assign(assign)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        """Also allow `counts[key] += 1`, rewritten so container and key are evaluated once:
        `_tmpA = counts; _tmpB = key; _write_(_tmpA)[_tmpB] = _inplacevar_('+=', _getitem_(...), 1)`."""
        target = node.target
        if not isinstance(target, ast.Subscript) or isinstance(target.slice, ast.Slice):
            return super().visit_AugAssign(node)
        container, key, value = self.visit(target.value), self.visit(target.slice), self.visit(node.value)
        obj_name, key_name = self.gen_tmp_name(), self.gen_tmp_name()

        def load(name: str) -> ast.Name:
            return ast.Name(name, ast.Load())

        current = ast.Call(ast.Name("_getitem_", ast.Load()), [load(obj_name), load(key_name)], [])
        updated = ast.Call(
            ast.Name("_inplacevar_", ast.Load()),
            [ast.Constant(IOPERATOR_TO_STR[type(node.op)]), current, value],
            [],
        )
        writable = ast.Call(ast.Name("_write_", ast.Load()), [load(obj_name)], [])
        statements = [
            ast.Assign([ast.Name(obj_name, ast.Store())], container),
            ast.Assign([ast.Name(key_name, ast.Store())], key),
            ast.Assign([ast.Subscript(writable, load(key_name), ast.Store())], updated),
        ]
        for statement in statements:
            ast.copy_location(statement, node)
            ast.fix_missing_locations(statement)
        return statements

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        self.error(node, "class definitions are not allowed; use functions, dicts and lists")
        return node


def _strip_annotations(args: ast.arguments) -> None:
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None


_LINE_PREFIX = re.compile(r"^Line (\d+|None): (.*)$", re.S)


def compile_program(source: str, filename: str) -> Any:
    """Compile under the policy, or raise PolicyError / SyntaxError with a line number."""
    tree = ast.parse(source, filename, "exec")  # SyntaxError carries lineno and text
    result = compile_restricted_exec(tree, filename, policy=ProgramPolicy)
    if result.errors:
        match = _LINE_PREFIX.match(result.errors[0])
        if match is None:
            raise PolicyError(filename, None, result.errors[0])
        lineno = None if match.group(1) == "None" else int(match.group(1))
        raise PolicyError(filename, lineno, match.group(2))
    return result.code


# ---------------------------------------------------------------------------------------------
# Run-time guards


_ITEM_WRITABLE = (list, dict, collections.deque)


class ItemWriter:
    """What `_write_` hands out for a subclass of list/dict/deque (`Counter`, `defaultdict`, ...):
    item writes pass through, attribute writes fail. The exact builtin types have no writable
    attributes, but these subclasses do, and their methods read them (a `Counter`'s repr calls
    `self.most_common`), so a program could otherwise plant its own code in them."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._target[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._target[key]

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"cannot set attributes of an object of type {type(self._target).__name__}")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"cannot delete attributes of an object of type {type(self._target).__name__}")


def _guarded_write(obj: Any) -> Any:
    """Item assignment on the program's own containers only; never attribute assignment."""
    if type(obj) in _ITEM_WRITABLE:
        return obj
    if isinstance(obj, _ITEM_WRITABLE):
        return ItemWriter(obj)
    raise TypeError(f"cannot modify an object of type {type(obj).__name__}")


def _guarded_getitem(obj: Any, index: Any) -> Any:
    return obj[index]


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "<<=": operator.ilshift,
    ">>=": operator.irshift, "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor,
    "@=": operator.imatmul,
}


def _inplacevar(op: str, target: Any, value: Any) -> Any:
    return _INPLACE[op](target, value)


def _apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


def _safe_getattr(obj: Any, name: str, *default: Any) -> Any:
    """`getattr` for programs: no private names, no `str.format`, no frame/code attributes.

    With a default, a refused attribute counts as a missing one, as in Python's `getattr`:
    `getattr(1, '__class__', None)` is None, not an error (the same answer `hasattr` gives)."""
    if len(default) > 1:
        raise TypeError("getattr expected at most 3 arguments")
    try:
        if name in CLASS_WALKS:
            raise AttributeError(f'"{name}" is a restricted name: it leads from a class to `object`')
        return safer_getattr_raise(obj, name)
    except (AttributeError, NotImplementedError):
        if default:
            return default[0]
        raise


def _safe_hasattr(obj: Any, name: str) -> bool:
    """False where `getattr` refuses the attribute, as Python's `hasattr` answers for a missing one:
    `hasattr('', 'format')` is False here (`str.format` is not for programs), not an error."""
    try:
        _safe_getattr(obj, name)
    except (AttributeError, NotImplementedError):
        return False
    return True


# ---------------------------------------------------------------------------------------------
# Builtins and importable modules

_BUILTIN_NAMES = (
    "abs all any bool callable chr dict divmod enumerate filter float frozenset hash int "
    "isinstance issubclass iter len list map max min next ord pow range repr reversed round "
    "set slice sorted str sum tuple zip"
).split()

_EXCEPTION_NAMES = (
    "ArithmeticError AssertionError AttributeError Exception IndexError KeyError LookupError "
    "MemoryError NameError NotImplementedError OverflowError RecursionError RuntimeError "
    "StopIteration TypeError ValueError ZeroDivisionError ImportError UnboundLocalError"
).split()

_STATISTICS_NAMES = (
    "mean fmean geometric_mean harmonic_mean median median_low median_high mode multimode "
    "pstdev pvariance stdev variance quantiles"
).split()

ALLOWED_MODULES = ("math", "statistics", "itertools", "functools", "collections")
"""Pure-computation modules programs may import; each exposes a curated set of names."""


def _public(module: types.ModuleType) -> dict[str, Any]:
    return {n: getattr(module, n) for n in dir(module) if not n.startswith("_")}


def _module_views() -> dict[str, types.SimpleNamespace]:
    """Fresh read-only-by-guard stand-ins for the whitelisted modules (never the real modules,
    whose attributes would lead to `sys` and friends)."""
    tables = {
        "math": _public(math),
        "statistics": {n: getattr(statistics, n) for n in _STATISTICS_NAMES if hasattr(statistics, n)}
        | {"StatisticsError": statistics.StatisticsError},
        "itertools": _public(itertools),
        "functools": {"reduce": functools.reduce, "cmp_to_key": functools.cmp_to_key},
        "collections": {
            "Counter": collections.Counter,
            "defaultdict": collections.defaultdict,
            "OrderedDict": collections.OrderedDict,
            "deque": collections.deque,
        },
    }
    return {name: types.SimpleNamespace(**table) for name, table in tables.items()}


def build_globals(stdout: PrintCollector) -> dict[str, Any]:
    """A fresh globals dict for one execution: safe builtins plus RestrictedPython's guards."""
    import builtins as _builtins

    modules = _module_views()

    def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level != 0 or name not in modules:
            allowed = ", ".join(ALLOWED_MODULES)
            raise ImportError(f"import of {name!r} is not allowed; importable modules: {allowed}")
        return modules[name]

    safe: dict[str, Any] = {name: getattr(_builtins, name) for name in _BUILTIN_NAMES + _EXCEPTION_NAMES}
    safe.update(
        {
            "None": None,
            "True": True,
            "False": False,
            "getattr": _safe_getattr,
            "hasattr": _safe_hasattr,
            "__import__": guarded_import,
        }
    )
    return {
        "__builtins__": safe,
        "__name__": "program",
        "_getattr_": safer_getattr_raise,
        "_getitem_": _guarded_getitem,
        "_getiter_": iter,
        "_write_": _guarded_write,
        "_inplacevar_": _inplacevar,
        "_apply_": _apply,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_print_": lambda _getattr_=None: stdout,
        # Bound without an import: the prompts offer `math`, and small models use it unimported in
        # helpers, then repeat the same NameError on every retry.
        "math": modules["math"],
    }


def reserved_name(name: str) -> bool:
    """Whether `name` belongs to the sandbox: a name the transformer emits (`_getattr_`, `_print`,
    `_tmp0`), one it forbids (`printed`, `builtins`), a dunder, or a name every program's globals or
    builtins bind (`_write_`, `math`, `getattr`, `__import__`). A library function of such a name
    would stand in for it in every program."""
    return (name.startswith("__") or bool(RESERVED_NAME.match(name)) or name in FORBIDDEN_FUNC_NAMES
            or name in _bound_names())


@functools.lru_cache(maxsize=1)
def _bound_names() -> frozenset[str]:
    bound = build_globals(PrintCollector(0))
    return frozenset(bound) | frozenset(bound["__builtins__"])
