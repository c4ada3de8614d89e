"""One instance of each predefined module: what a program's namespace is built from.

A plain container, so oracle and model-backed modules can be mixed per slot (e.g. oracle `loc`
with a model `depth`); validation only checks each slot implements the right spec class.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields

from base_modules.module import (
    PREDEFINED_MODULES,
    VQA,
    Depth,
    Loc,
    Module,
    ObjectSize2D,
    SameObject,
    spec_class,
)


@dataclass
class ModuleSet:
    """The five predefined modules; field names are the names programs call them by."""

    loc: Loc
    depth: Depth
    vqa: VQA
    same_object: SameObject
    get_2D_object_size: ObjectSize2D

    def __post_init__(self) -> None:
        for spec in PREDEFINED_MODULES:
            module = getattr(self, spec.name)
            if not isinstance(module, Module):
                raise TypeError(
                    f"ModuleSet.{spec.name} must be a {spec.__name__} module, got {module!r}"
                )
            try:
                actual = spec_class(module)
            except TypeError:
                actual = None
            if actual is not spec:
                got = actual.__name__ if actual else "no predefined module"
                raise TypeError(
                    f"ModuleSet.{spec.name} must implement {spec.__name__}, but "
                    f"{type(module).__name__} implements {got}"
                )

    def as_namespace(self) -> dict[str, Module]:
        """Module name as the LLM sees it -> module, in the predefined order."""
        return {spec.name: getattr(self, spec.name) for spec in PREDEFINED_MODULES}

    def __iter__(self) -> Iterator[Module]:
        return iter(self.as_namespace().values())

    def __len__(self) -> int:
        return len(fields(self))
