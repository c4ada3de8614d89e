"""The one perception-module interface, the five predefined modules, and a set of one of each.

The four region tools (`REGION_MODULES`) are modules too; they join a program's API only when its
question points at regions (see base_modules.region_tools).

A concrete module (oracle or model-backed) subclasses one of the five spec classes below and
implements `forward`. The spec class owns the signature and the docstring: that text is what the
LLM reads, rendered by `module_stub()`, so it is never kept by hand in a second place.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from base_modules.types import BBox, Image, Region


class ModuleError(Exception):
    """A module cannot serve this call (bad arguments, unanswerable question); shown to the LLM."""


def resolve_device(device: str) -> str:
    """Map 'auto' to 'cuda' when torch sees a GPU, else 'cpu'; other values pass through."""
    if device != "auto":
        return device
    try:
        import torch  # noqa: PLC0415 - optional dependency, imported only when asked
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


class Module(ABC):
    """A named, typed, lazily loaded perception callable.

    `__call__` loads the model on first use (`load()` is idempotent) and delegates to `forward`.
    Oracle modules have nothing to load; model-backed modules override `_load`.
    """

    name: ClassVar[str]

    def __init__(self, *, device: str = "auto") -> None:
        self._requested_device = device
        self._resolved_device: str | None = None
        self._loaded = False

    @property
    def device(self) -> str:
        if self._resolved_device is None:
            self._resolved_device = resolve_device(self._requested_device)
        return self._resolved_device

    @property
    def loaded(self) -> bool:
        return self._loaded

    def load(self) -> None:
        if not self._loaded:
            self._load()
            self._loaded = True

    def _load(self) -> None:
        """Load weights; the default has nothing to load."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            inspect.signature(self.forward).bind(*args, **kwargs)
        except TypeError as exc:  # wrong arguments are the program's mistake: say the right call
            spec = spec_class(self)
            parameters = ", ".join(p for p in inspect.signature(spec.forward).parameters if p != "self")
            raise ModuleError(f"{self.name}({parameters}) was called wrongly: {exc}") from None
        self.load()
        return self.forward(*args, **kwargs)

    @abstractmethod
    def forward(self, *args: Any, **kwargs: Any) -> Any: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, device={self._requested_device!r})"


class Loc(Module):
    name = "loc"

    @abstractmethod
    def forward(self, image: Image, object_prompt: str) -> list[BBox]:
        """Locate every object in the image that matches `object_prompt`.

        `object_prompt` is a short noun phrase such as "red cube", "small metal sphere" or
        "chair"; "objects" returns all objects. Returns a list of boxes
        [x_min, y_min, x_max, y_max] in image pixels, one per object (empty list if none).
        """


class Depth(Module):
    name = "depth"

    @abstractmethod
    def forward(self, image: Image, bbox: BBox) -> float:
        """Return the metric depth of the object in `bbox`: its distance from the camera along
        the viewing axis. Larger values are farther from the camera."""


class VQA(Module):
    name = "vqa"

    @abstractmethod
    def forward(self, image: Image, question: str, bbox: BBox) -> str:
        """Answer a short question about the single object in `bbox`, for example
        "What color is this object?", "What shape is it?", "What material is it made of?",
        "What size is it?" or a yes/no question such as "Is it red?". Returns a short
        lower-case answer ("red", "cube", "metal", "large", "yes", "no")."""


class SameObject(Module):
    name = "same_object"

    @abstractmethod
    def forward(self, image: Image, bbox1: BBox, bbox2: BBox) -> bool:
        """Return True if `bbox1` and `bbox2` show the same object."""


class ObjectSize2D(Module):
    name = "get_2D_object_size"

    @abstractmethod
    def forward(self, image: Image, bbox: BBox) -> tuple[float, float]:
        """Return the (width, height) of the object in `bbox`, in image pixels."""


PREDEFINED_MODULES: tuple[type[Module], ...] = (Loc, Depth, VQA, SameObject, ObjectSize2D)
"""The predefined API, in the order the LLM sees it."""


class RegionDistance(Module):
    name = "distance"

    @abstractmethod
    def forward(self, image: Image, region_a: Region, region_b: Region) -> float:
        """Return the distance in metres between the centres of `region_a` and `region_b`
        in 3D, for example between two pallets or between a pallet and a buffer region."""


class RegionInside(Module):
    name = "inside"

    @abstractmethod
    def forward(self, image: Image, region: Region, area: Region) -> bool:
        """Return True if the object `region` stands inside the floor region `area` (a buffer
        zone, a marked area). To count the pallets in an area, count the boxes of
        loc(image, "pallet") for which inside(image, box, area) is True."""


class RegionLeft(Module):
    name = "is_left"

    @abstractmethod
    def forward(self, image: Image, region_a: Region, region_b: Region) -> bool:
        """Return True if `region_a` is to the left of `region_b` in the image, False if it is
        to the right. Whether a is to the right of b is is_left(image, region_b, region_a)."""


class RegionPick(Module):
    name = "pick_region"

    @abstractmethod
    def forward(self, image: Image, regions: list[Region], which: str) -> int:
        """Return the position in the list `regions` of the one that is `which`: "leftmost",
        "rightmost", "middle" (the middle one from left to right) or "closest" (closest to
        the camera). For example pick_region(image, [0, 1, 2], "leftmost") returns 0, 1 or 2."""


REGION_MODULES: tuple[type[Module], ...] = (RegionDistance, RegionInside, RegionLeft, RegionPick)
"""The region tools, in the order the LLM sees them when a question points at regions."""


def spec_class(module: Module | type[Module]) -> type[Module]:
    """The predefined spec class a module implements (the one whose signature the LLM sees)."""
    cls = module if isinstance(module, type) else type(module)
    for spec in (*PREDEFINED_MODULES, *REGION_MODULES):
        if issubclass(cls, spec):
            return spec
    for base in cls.__mro__:  # another spec (a multi-view module) derives from Module directly
        if Module in base.__bases__ and "name" in vars(base):
            return base
    raise TypeError(f"{cls.__name__} implements none of the predefined modules")


def module_stub(spec: type[Module]) -> str:
    """Render a predefined module as a Python stub: `def name(params) -> ret:` plus docstring."""
    signature = inspect.signature(spec.forward)
    params = ", ".join(
        f"{p.name}: {p.annotation}" for p in signature.parameters.values() if p.name != "self"
    )
    rendered = f"({params}) -> {signature.return_annotation}"
    doc = inspect.cleandoc(spec.forward.__doc__ or "")
    body = "\n".join(("    " + line) if line else "" for line in doc.splitlines())
    return f'def {spec.name}{rendered}:\n    """\n{body}\n    """'


@dataclass
class ModuleSet:
    """One instance of each predefined module; field names are the names programs call them by.

    A plain container, so oracle and model-backed modules can be mixed per slot (e.g. oracle `loc`
    with a model `depth`); validation only checks each slot implements the right spec class.
    """

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
