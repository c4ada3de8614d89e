"""What a library helper may be called and how large it may be: one set of rules for every way in.

A helper joins every program's namespace, and its signature and docstring join the prompts, so a
helper named after a module (`loc`), a built-in (`len`, `print`), a name the sandbox binds
(`_getattr_`, `math`) or a name the namespace binds (`image`, `region`) would replace it in every
program, and one huge helper would swell every request. These rules are applied where helpers come
in (`vadar library add` and `import`, the Signature and API agents, distillation) and again each time
a namespace is built, where a helper that breaks one is left out with a warning instead of ending the
run. The store (`api_store`) knows none of them.

The bounds come from the real libraries (docs/results/*/library.json and the hand-written CLEVR
library: the longest helper is 734 characters of code, 176 of docstring and 69 of signature; the
largest library 4,314 characters in all) and from the prompt: the embedded model has 8,192 tokens of
context, of which the Program agent's prompt without helpers takes about 700 and its reply up to 1,024.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from api_store import FunctionRecord
from base_modules.module import PREDEFINED_MODULES, REGION_MODULES
from base_modules.view_modules import VIEW_MODULES
from vadar.programs.calls import called_names
from vadar.sandbox import LibrarySourceError, check_library_policy, check_library_source, reserved_name

log = logging.getLogger(__name__)

MAX_CODE_CHARS = 8_000
"""Longest helper source: 11 times the longest real helper, and twice what a 1,024-token reply holds."""

MAX_DOCSTRING_CHARS = 2_000
"""Longest docstring: 11 times the longest real one; every prompt that lists the helper shows it."""

MAX_SIGNATURE_CHARS = 400
"""Longest signature text, `(params) -> type`: six times the longest real one."""

MAX_LIBRARY_STUB_CHARS = 24_000
"""Signatures and docstrings of all the helpers one request may show: about 6,000 tokens, what the
embedded model's context holds beside the rest of the prompt and the reply (the largest real library
shows about 1,600 characters)."""

MAX_LIBRARY_CODE_CHARS = 200_000
"""Source of all the helpers one program runs with (each is compiled before every program): 25
helpers at the largest size, some 300 of real size (the largest real library has about 3,000)."""

MAX_LIBRARY_HELPERS = 2_000
"""Most helpers one library holds, and so one import brings: 300,000 imported helpers took 104 s to
import, `vadar library list` 279 s and 3.3 GB, and a warning line each on every solve. The largest
real library has 9, and the request bounds above show about 100 of real size."""

MODULE_NAMES = frozenset(spec.name for spec in (*PREDEFINED_MODULES, *REGION_MODULES, *VIEW_MODULES))
"""The perception modules, the region tools and the multi-view modules."""

NAMESPACE_NAMES = frozenset({"image", "views", "region", "final_result", "math"})
"""Names `programs.namespace` and the programs themselves bind besides the modules."""


class HelperRuleError(ValueError):
    """A helper breaks a rule; the message is one line naming the helper and the rule."""


class HelperText(Protocol):
    """What the rules read of a helper (an `api_store` record, a stub, a hand-written function)."""

    name: str
    signature: str
    docstring: str
    code: str | None


H = TypeVar("H", bound=HelperText)


def name_problem(name: object) -> str | None:
    """Why `name` cannot be a helper's name, or None: exactly one leading underscore, a valid ASCII
    identifier, and not a module, namespace, sandbox-reserved or built-in name.

    ASCII only: `_objects_lеft_of` with a Cyrillic `е` is a different Python name that reads the
    same, so it would pass beside `_objects_left_of` through every duplicate and tried-before screen."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        return f"{name!r} is not a valid Python name"
    if not name.isascii():
        odd = next(c for c in name if not c.isascii())
        return (f"{name!r} has the non-ASCII character {odd!r} (U+{ord(odd):04X}); helper names are ASCII letters, "
                "digits and underscores")
    if name in MODULE_NAMES:
        return f"`{name}` is the name of a module; a helper would replace it in every program"
    if name in NAMESPACE_NAMES:
        return f"`{name}` is a name every program's namespace binds; a helper would replace it"
    if hasattr(builtins, name):
        return f"`{name}` is a Python built-in; a helper would replace it in every program"
    one_underscore = f"`{name}`: helper names start with exactly one underscore (such as `_left_of`)"
    if name.startswith("__"):
        return one_underscore
    if reserved_name(name):
        return f"`{name}` is a name the sandbox reserves"
    if not name.startswith("_") or not name.strip("_"):
        return one_underscore
    return None


def check_name(name: object) -> None:
    """Raise `HelperRuleError` when `name_problem` finds one."""
    problem = name_problem(name)
    if problem is not None:
        raise HelperRuleError(problem)


def text_problem(name: str, signature: object, docstring: object, code: object = None) -> str | None:
    """Why the signature, docstring or code of helper `name` is not text within its bound, or None."""
    for part, value, bound in (("signature", signature, MAX_SIGNATURE_CHARS),
                               ("docstring", docstring, MAX_DOCSTRING_CHARS), ("code", code, MAX_CODE_CHARS)):
        if part == "code" and value is None:
            continue
        if not isinstance(value, str):
            return f"helper {name}: its {part} must be text, not {type(value).__name__}"
        if len(value) > bound:
            return f"helper {name}: its {part} has {len(value):,} characters, more than the {bound:,} allowed"
    return None


def check_helper(name: object, signature: object, docstring: object, code: object) -> None:
    """Raise `HelperRuleError` unless helper `name` may be stored and run: its name, the sizes of
    its texts, and its code (when it has any) one plain `def` that compiles under the sandbox policy."""
    problem = name_problem(name) or text_problem(str(name), signature, docstring, code)
    if problem is None and code is not None:
        problem = _code_problem(str(name), str(code))
    if problem is not None:
        raise HelperRuleError(problem)


@functools.lru_cache(maxsize=4096)
def _code_problem(name: str, code: str) -> str | None:
    """Why `code` cannot run as library function `name`, or None; remembered, since every namespace
    built (one per question and test scene) checks its helpers again."""
    try:
        check_library_source(name, code)
        check_library_policy(name, code)
    except LibrarySourceError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{exc.message}{where}"
    return None


def signature_problem(name: str, signature: str, code: str) -> str | None:
    """Why the stored signature of helper `name` does not describe its code, or None: the prompts
    show the signature, every program calls the code. Parameters must agree in names, order, kind
    and which have defaults; annotations and defaults' values may differ."""
    try:
        stated = ast.parse(f"def {name}{signature}:\n    pass\n").body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return f"helper {name}: its signature {signature!r} is not a Python signature"
    defined = next((node for node in ast.parse(code).body if isinstance(node, ast.FunctionDef)), None)
    if not isinstance(stated, ast.FunctionDef) or defined is None:
        return f"helper {name}: its signature {signature!r} is not a Python signature"
    said, written = _parameter_list(stated.args), _parameter_list(defined.args)
    if said != written:
        return (f"helper {name}: its signature says ({', '.join(said)}) but its code takes "
                f"({', '.join(written)})")
    return None


def _parameter_list(args: ast.arguments) -> list[str]:
    """Parameters as a call sees them: `image`, `k=...`, `*rest`, `**options`."""
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    shown = [a.arg + ("=..." if i >= first_default else "") for i, a in enumerate(positional)]
    if args.posonlyargs:
        shown.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        shown.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        shown.append("*")
    shown += [a.arg + ("=..." if d is not None else "") for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg is not None:
        shown.append("**" + args.kwarg.arg)
    return shown


def recursion_problem(name: str, calls: Iterable[str]) -> str | None:
    """A helper may not call itself: a program's one question must not turn into unbounded calls."""
    return f"`{name}` calls itself: recursion is not allowed" if name in set(calls) else None


def cycle_text(path: Sequence[str]) -> str:
    """A cycle of calls as every refusal writes it: `cycle of calls: _a -> _b -> _a`."""
    return f"cycle of calls: {' -> '.join(path)}"


def call_problem(calls: Mapping[str, Iterable[str]]) -> str | None:
    """The first helper that calls itself or takes part in a cycle of calls among `calls` (each
    helper's name to the names its code calls), or None. The API agent refuses both as it implements;
    a library that arrives whole (an import) is held to the same rule."""
    graph = {name: sorted(set(called) & set(calls)) for name, called in calls.items()}
    for name in graph:
        problem = recursion_problem(name, graph[name])
        if problem is not None:
            return problem
    done: set[str] = set()  # helpers whose calls lead to no cycle
    for start in graph:
        if start in done:
            continue
        path, pending = [start], [iter(graph[start])]
        while pending:
            following = next(pending[-1], None)
            if following is None:
                done.add(path.pop())
                pending.pop()
            elif following in path:
                return cycle_text([*path[path.index(following):], following])
            elif following not in done:
                path.append(following)
                pending.append(iter(graph[following]))
    return None


def stored_calls(functions: Iterable[FunctionRecord], *, excluding: Collection[str] = ()) -> dict[str, set[str]]:
    """Each stored function's name (but those in `excluding`, which are being replaced) to the names
    its code calls; a function that does not run (proposed, failed) calls nothing."""
    return {f.name: called_names(f.code) if f.code and f.status.runs else set()
            for f in functions if f.name not in excluding}


def joining_problem(existing: Mapping[str, Iterable[str]], adding: Mapping[str, Iterable[str]]) -> str | None:
    """What adding helpers (`adding`: name to the names its code calls) to a library (`existing`, from
    `stored_calls`) would break: its bound of `MAX_LIBRARY_HELPERS`, or a call of itself or a cycle of
    calls, among them or through the library's own helpers."""
    if len(existing) + len(adding) > MAX_LIBRARY_HELPERS:
        return (f"the library has {len(existing):,} other functions; with these {len(adding):,} it would hold "
                f"more than the {MAX_LIBRARY_HELPERS:,} allowed")
    problem = call_problem(adding)
    if problem is None:
        problem = call_problem({**existing, **adding})
        problem = f"with the library's functions: {problem}" if problem is not None else None
    return problem


@dataclass(frozen=True)
class LeftOut:
    """A helper left out of a namespace or a request, and why."""

    name: str
    reason: str


def fit_library(helpers: Iterable[H], *, on_left_out: Callable[[LeftOut], None] | None = None) -> list[H]:
    """The helpers that pass every rule, in order, while the library's totals stay within
    `MAX_LIBRARY_STUB_CHARS` and `MAX_LIBRARY_CODE_CHARS`; each one left out is reported (by
    default as a warning, once per helper and reason)."""
    report = on_left_out or warn_left_out
    kept: list[H] = []
    stubs = code = 0
    for helper in helpers:
        try:
            check_helper(helper.name, helper.signature, helper.docstring, helper.code)
        except HelperRuleError as exc:
            report(LeftOut(str(helper.name), str(exc)))
            continue
        stub_chars, code_chars = len(helper.signature) + len(helper.docstring), len(helper.code or "")
        if stubs + stub_chars > MAX_LIBRARY_STUB_CHARS or code + code_chars > MAX_LIBRARY_CODE_CHARS:
            report(LeftOut(helper.name, f"the library's helpers before it fill the bound of {MAX_LIBRARY_STUB_CHARS:,} "
                                        f"characters of signatures and docstrings and {MAX_LIBRARY_CODE_CHARS:,} "
                                        "of code per request"))
            continue
        stubs, code = stubs + stub_chars, code + code_chars
        kept.append(helper)
    return kept


_warned: set[LeftOut] = set()


def warn_left_out(left_out: LeftOut) -> None:
    """Log a helper left out, once per process for each helper and reason (a run builds a
    namespace per question)."""
    if left_out not in _warned:
        _warned.add(left_out)
        log.warning("warning: library function %s is left out: %s", left_out.name, left_out.reason)

