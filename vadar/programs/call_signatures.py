"""The signatures a program's calls are checked against, read from the API text the LLM reads.

The API text (`api_text.render_api`) is Python stubs rendered from the module classes and the
store, so its `def` lines are the one written form of every callable's parameters and annotated
types. Reading them back (rather than the helpers' code, which may carry no annotations) checks a
program against exactly what its writer was shown.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
import functools
import inspect
import numbers
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vadar.programs.helper_calls import value_lists
from vadar.programs.helper_rules import MODULE_NAMES, NAMESPACE_NAMES


class Kind(enum.Enum):
    """What a value is, as far as a box parameter cares."""

    BOX = "a box"
    BOXES = "a list of boxes"
    LIST = "a list"
    BOOL = "a bool"
    NUMBER = "a number"
    STRING = "a string"
    PAIR = "a pair of numbers"


NOT_A_BOX = frozenset({Kind.BOXES, Kind.LIST, Kind.BOOL, Kind.NUMBER, Kind.STRING, Kind.PAIR})
"""Kinds that can never stand where one box goes."""

_ANNOTATION_KINDS = {
    "BBox": Kind.BOX,
    "list[BBox]": Kind.BOXES,
    "List[BBox]": Kind.BOXES,
    "bool": Kind.BOOL,
    "int": Kind.NUMBER,
    "float": Kind.NUMBER,
    "str": Kind.STRING,
    "tuple[float,float]": Kind.PAIR,  # a 2D size, (width, height): a CLEVR program passed one for a box
}


def annotation_kind(annotation: str | None) -> Kind | None:
    """The kind an annotation promises, or None where it promises nothing checkable."""
    if annotation is None:
        return None
    return _ANNOTATION_KINDS.get(annotation.replace(" ", ""))


def value_kind(value: object) -> Kind | None:
    """The kind of a value a call returned, where it is one of the annotated kinds."""
    if isinstance(value, bool):
        return Kind.BOOL
    if isinstance(value, numbers.Real):
        return Kind.NUMBER
    if isinstance(value, str):
        return Kind.STRING
    if isinstance(value, (list, tuple)):
        if len(value) == 4 and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
            return Kind.BOX
        if all(value_kind(v) is Kind.BOX for v in value):
            return Kind.BOXES
        return Kind.LIST
    return None


def return_annotation(signature: str) -> str | None:
    """The annotation after `->` in a signature as the API text writes it, or None without one."""
    return signature.rpartition("->")[2].strip() if "->" in signature else None


def return_mismatch(signature: str, value: object) -> str | None:
    """What is wrong when a helper's returned value is not the kind its signature's annotation
    promises (a count returned as the list of boxes it counts, boxes for one box), or None. None, a
    kind no annotation names, and lists of other things where boxes go pass."""
    annotation = return_annotation(signature)
    wanted, got = annotation_kind(annotation), value_kind(value)
    if wanted is None or got is None or got is wanted or wanted is Kind.PAIR:
        return None
    lists = {Kind.BOX, Kind.BOXES, Kind.LIST}
    if wanted in lists and got in lists and not (wanted is Kind.BOX and got is Kind.BOXES and value):
        return None  # lists of other things (3D boxes, four numbers) are not decided here; boxes for a box are
    return f"{got.value}, but its signature promises {wanted.value} (`-> {annotation}`)"


@dataclass(frozen=True)
class CallSignature:
    """One callable of the API: its parameters with their annotations, and what it returns."""

    name: str
    parameters: tuple[str, ...]
    annotations: tuple[str | None, ...]  # one per parameter, as written
    returns: str | None
    signature: inspect.Signature
    helper: bool  # a library helper, not a module or a namespace function
    text: str  # `name(params) -> ret`, as the API text writes it
    choices: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (parameter, its documented values), `documented_choices`

    def annotation(self, parameter: str) -> str | None:
        if parameter not in self.parameters:
            return None
        return self.annotations[self.parameters.index(parameter)]

    def choices_of(self, parameter: str) -> tuple[str, ...]:
        """The values the docstring allows `parameter`, or () where it lists none."""
        return next((values for name, values in self.choices if name == parameter), ())

    def positional(self, index: int) -> str | None:
        """The parameter a positional argument at `index` binds, where one does."""
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params = [p.name for p in self.signature.parameters.values() if p.kind in kinds]
        return params[index] if index < len(params) else None

    def misfit(self, positional: int, keywords: Sequence[str]) -> str | None:
        """Why `positional` arguments and these keyword names do not fit, or None when they do."""
        try:
            self.signature.bind(*range(positional), **{name: None for name in keywords})
        except TypeError as exc:
            return str(exc)
        return None

    @property
    def returns_value(self) -> bool:
        return self.returns not in (None, "None")


@dataclass(frozen=True)
class CallableApi:
    """What a program may call: the API's signatures, and every other name bound for it."""

    signatures: dict[str, CallSignature]
    namespace: frozenset[str]  # what the program's namespace binds (modules, helpers, image, ...)

    def exists(self, name: str) -> bool:
        return name in self.signatures or name in self.namespace or name in _SANDBOX_NAMES

    def callable_names(self) -> list[str]:
        """Names to suggest for a misspelt one: the API's functions and the namespace's."""
        return sorted((self.signatures.keys() | self.namespace) - NAMESPACE_NAMES)


_SANDBOX_NAMES = frozenset(dir(builtins)) | NAMESPACE_NAMES
_DEF_LINE = re.compile(r"^def\s+\w+\s*\(", re.MULTILINE)


def callable_api(api_text: str, namespace_names: Iterable[str] = ()) -> CallableApi:
    """The API of `api_text` (its `def` stubs) plus the names a namespace binds."""
    return CallableApi(read_signatures(api_text), frozenset(namespace_names))


@functools.lru_cache(maxsize=64)
def read_signatures(api_text: str) -> dict[str, CallSignature]:
    """Every `def` stub of the API text by name; a stub that does not parse is skipped (unchecked)."""
    signatures: dict[str, CallSignature] = {}
    starts = [match.start() for match in _DEF_LINE.finditer(api_text)]
    for start, end in zip(starts, [*starts[1:], len(api_text)]):
        node = _parse_header(api_text, start)
        if node is not None:
            signature = _signature(node)
            choices = documented_choices(_docstring(api_text[start:end]), signature.parameters)
            signatures[node.name] = dataclasses.replace(signature, choices=choices)
    return signatures


def _docstring(stub: str) -> str:
    """The first triple-quoted text of one stub (its `def` up to the next), or ""."""
    parts = stub.split('"""', 2)
    return parts[1] if len(parts) == 3 else ""


def documented_choices(docstring: str, parameters: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each parameter whose docstring lists its values in quotes right after its name, as the catalogue
    writes them ("`relation` ('left', 'right', 'front' or 'behind')"), with those values: what a
    program's literal argument is checked against (`choice_args`). A list of one value, or one left
    open ("('left', 'right', ...)"), gives examples, not the values."""
    found: dict[str, tuple[str, ...]] = {}
    for listed in value_lists(docstring):
        if (listed.parameter in parameters and listed.parameter not in found and listed.right_after
                and not listed.open and len(listed.values) > 1):
            found[listed.parameter] = listed.values
    return tuple(found.items())


def _parse_header(text: str, start: int) -> ast.FunctionDef | None:
    """The `def` header starting at `start`, over as many lines as it takes (at most a few)."""
    lines = text[start:].splitlines()
    for end in range(1, min(len(lines), 6) + 1):
        header = "\n".join(lines[:end])
        if not header.rstrip().endswith(":"):
            continue
        try:
            tree = ast.parse(header + "\n    ...\n")
        except SyntaxError:
            continue
        node = tree.body[0]
        return node if isinstance(node, ast.FunctionDef) else None
    return None


def _signature(node: ast.FunctionDef) -> CallSignature:
    args = node.args
    kind = inspect.Parameter
    params: list[inspect.Parameter] = []
    annotations: list[str | None] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        which = kind.POSITIONAL_ONLY if index < len(args.posonlyargs) else kind.POSITIONAL_OR_KEYWORD
        default = None if index >= first_default else kind.empty
        params.append(kind(arg.arg, which, default=default))
        annotations.append(_text(arg.annotation))
    if args.vararg:
        params.append(kind(args.vararg.arg, kind.VAR_POSITIONAL))
        annotations.append(None)
    for arg, default_node in zip(args.kwonlyargs, args.kw_defaults):
        params.append(kind(arg.arg, kind.KEYWORD_ONLY, default=kind.empty if default_node is None else None))
        annotations.append(_text(arg.annotation))
    if args.kwarg:
        params.append(kind(args.kwarg.arg, kind.VAR_KEYWORD))
        annotations.append(None)
    returns = _text(node.returns)
    signature = inspect.Signature(params, return_annotation=returns if returns else inspect.Signature.empty)
    helper = node.name not in MODULE_NAMES and node.name not in NAMESPACE_NAMES
    text = f"{node.name}({ast.unparse(args)})" + (f" -> {returns}" if returns else "")
    return CallSignature(node.name, tuple(p.name for p in params), tuple(annotations), returns, signature,
                         helper, text)


def _text(node: ast.expr | None) -> str | None:
    return ast.unparse(node) if node is not None else None
