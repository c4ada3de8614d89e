"""Render the API text the LLM reads, from module code and the library store, never by hand."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from base_modules.module import PREDEFINED_MODULES, REGION_MODULES, Module, module_stub
from base_modules.types import Region
from vadar import prompts
from vadar.programs.formula import body_formula



class FunctionSpec(Protocol):
    """What rendering needs of a library function (an `api_store` record satisfies it)."""

    name: str
    signature: str
    docstring: str


class ExampleCall(NamedTuple):
    """One call of a library function from a right program, and the question that program answered.

    The question is shown with the call: it tells which argument is which object ("how much farther
    is the chair than the table" -> `(image, chair, table)`) and which questions the function is for.
    """

    question: str
    code: str  # the call, after the lines that set its arguments


def function_stub(name: str, signature: str, docstring: str, example: ExampleCall | None = None) -> str:
    """`def name(signature):` plus an indented docstring; `signature` is '(params) -> ret'.

    `example`, a call of the function from a right program, is shown under the docstring
    with its question: a small model copies a call it has seen more readily than it composes one
    from a signature.
    """
    signature = signature.strip()
    if signature.startswith("def "):
        signature = signature[4:]
    if signature.startswith(name):
        signature = signature[len(name):]
    signature = signature.rstrip(":").strip()
    lines = [line.rstrip() for line in docstring.strip().splitlines()] or [""]
    if example:
        asked = " ".join(example.question.split())
        lines += ["", f'Example, for "{asked}":' if asked else "Example:"]
        lines += [f"    {line.strip()}" for line in example.code.strip().splitlines()]
    body = "\n".join(("    " + line) if line else "" for line in lines)
    return f'def {name}{signature}:\n    """\n{body}\n    """'


_MODULE_NAMES = tuple(spec.name for spec in PREDEFINED_MODULES)


def render_api(
    library: Iterable[FunctionSpec] = (),
    modules: Sequence[type[Module]] = PREDEFINED_MODULES,
    examples: Mapping[str, ExampleCall] | None = None,
    views: bool = False,
) -> str:
    """The whole API as Python stubs: types, predefined modules, then library functions.

    `examples` maps a library function's name to one call of it from a right program. `views`
    (a question about several frames) explains `views` and lists the multi-view modules given
    in `modules`.
    """
    examples = examples or {}
    parts = [prompts.render("api_types").rstrip("\n"), "# Predefined modules"]
    parts += [module_stub(spec) for spec in modules if spec in PREDEFINED_MODULES]
    several = [spec for spec in modules if spec not in PREDEFINED_MODULES]
    if views:
        parts.append(prompts.render("api_views", across=bool(several)).rstrip("\n"))
        parts += [module_stub(spec) for spec in several]
    functions = list(library)
    if functions:
        parts.append("# Library functions (already implemented; call them directly)")
        parts += [function_stub(f.name, f.signature, shown_docstring(f), examples.get(f.name)) for f in functions]
    return "\n\n".join(parts) + "\n"


def shown_docstring(function: FunctionSpec) -> str:
    """A library function's docstring, completed by the expression its body returns when that is one
    call of another helper or a module (`vadar.programs.formula.body_formula`): what it computes, not
    only what its name and docstring suggest (a confirmed `_size_of_object` said "in image pixels" of a
    `vqa` reading, and a program read a material with it)."""
    call = body_formula(getattr(function, "code", None), _MODULE_NAMES)
    if call is None or call in function.docstring:
        return function.docstring
    return f"{function.docstring.rstrip()} Returns `{call}`."


def with_regions(api_text: str, regions: Sequence[Region]) -> str:
    """`api_text` plus `region()` and the region tools when the question points at regions;
    without regions the text is returned unchanged."""
    if not regions:
        return api_text
    names = ", ".join(r.name for r in regions)
    header = prompts.render("api_regions", names=names, first=regions[0].name).rstrip("\n")
    parts = [header, *(module_stub(spec) for spec in REGION_MODULES)]
    return api_text + "\n" + "\n\n".join(parts) + "\n"


_CALLED_IN_TEXT = re.compile(r"`(_[A-Za-z0-9_]+)\(")


def composes_helpers(docstring: str, implemented: Collection[str]) -> bool:
    """Whether the docstring asks for a helper built on implemented library helpers (it writes one as
    a call): such a request is shown an example that composes helpers, not one that loops over `loc`.
    Shown only the loop, 3 of 5 samples of a CLEVR build's `_count_related` copied it and called the
    relation helpers inside it on single boxes, and one `_attribute_of_same` sample did too."""
    return any(name in implemented for name in _CALLED_IN_TEXT.findall(docstring))
