"""The region tools a program gets when its question points at regions: references and binding.

A program names a region by its number k (`region(k)`), its identifier ("<pallet_0>") or a box: a
box returned by `region(k)` stands for that region (its mask included), any other box (from `loc`)
for the object it frames. `bind_region_tools` resolves these references to `Region` values before
the tool modules see them, so tools work on boxes and masks, never on the program's spelling.

The tools themselves: `base_modules.region_geometry` (from masks and a depth module) and
`base_modules.oracle.regions3d` (from 3D annotations).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from base_modules.masks import cached_mask, mask_centroid
from base_modules.module import (
    REGION_MODULES,
    Module,
    ModuleError,
    RegionDistance,
    RegionInside,
    RegionLeft,
    RegionPick,
)
from base_modules.types import BBox, Image, Region

CHOICES = ("leftmost", "rightmost", "middle", "closest")
BOX_MATCH = 1e-6
"""A box equal to a region's box (within this many pixels) stands for that region."""


def region_mask(region: Region) -> np.ndarray | None:
    """The region's boolean mask, or None for a box-only region."""
    if region.mask_size is None or region.mask_counts is None:
        return None
    return cached_mask(int(region.mask_size[0]), int(region.mask_size[1]), region.mask_counts)


def region_point(region: Region) -> tuple[float, float]:
    """The region's image point: its mask centroid, or its box centre without a mask."""
    mask = region_mask(region)
    centre = mask_centroid(mask) if mask is not None else None
    if centre is not None:
        return centre
    x0, y0, x1, y1 = region.box
    return ((x0 + x1) / 2, (y0 + y1) / 2)


def choose(keys: Sequence[float], which: str) -> int:
    """Position of the `which` entry given each entry's key (x for left/right/middle, range for closest)."""
    if which not in CHOICES:
        raise ModuleError(f"which must be one of {', '.join(repr(c) for c in CHOICES)}, got {which!r}")
    order = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    if which in ("leftmost", "closest"):
        return order[0]
    if which == "rightmost":
        return order[-1]
    return order[(len(order) - 1) // 2]


class RegionTable:
    """The regions of one question and the references a program may use for them."""

    def __init__(self, regions: Sequence[Region]) -> None:
        self.regions = tuple(regions)

    def names(self) -> str:
        return ", ".join(r.name for r in self.regions) or "none"

    def resolve(self, ref: Any) -> Region:
        """A region from its number, identifier, or a box (a question region's box or any other)."""
        if isinstance(ref, Region):
            return ref
        if isinstance(ref, bool):
            raise ModuleError(f"expected a region (a number, an identifier such as "
                              f"{self._example()} or a box), got {ref!r}")
        if isinstance(ref, int):
            if 0 <= ref < len(self.regions):
                return self.regions[ref]
            raise ModuleError(f"region {ref} does not exist: this question has {len(self.regions)} "
                              f"region(s), numbered from 0 ({self.names()})")
        if isinstance(ref, str):
            name = ref.strip()
            name = name if name.startswith("<") else f"<{name}>"
            for region in self.regions:
                if region.name == name:
                    return region
            raise ModuleError(f"no region {ref!r} in this question; its regions are {self.names()}")
        return self._from_box(ref)

    def _from_box(self, ref: Any) -> Region:
        try:
            box = tuple(float(v) for v in ref)
        except (TypeError, ValueError):
            box = ()
        if len(box) != 4 or box[2] < box[0] or box[3] < box[1]:
            raise ModuleError(f"expected a region (a number, an identifier such as {self._example()} "
                              f"or a box [x_min, y_min, x_max, y_max]), got {ref!r}")
        for region in self.regions:
            if all(abs(a - b) <= BOX_MATCH for a, b in zip(region.box, box)):
                return region
        return Region(name="", box=box)  # type: ignore[arg-type]

    def _example(self) -> str:
        return repr(self.regions[0].name) if self.regions else "'<region_0>'"

    def box(self, ref: Any) -> BBox:
        """`region(k)` for programs: the box of a question region, as `loc` gives boxes."""
        if isinstance(ref, (list, tuple)):
            raise ModuleError("region() takes a region number or identifier, such as region(0) or "
                              f"region({self._example()})")
        return list(self.resolve(ref).box)


@dataclass(frozen=True)
class RegionModules:
    """One module per region tool; field names are the names programs call them by."""

    distance: RegionDistance
    inside: RegionInside
    is_left: RegionLeft
    pick_region: RegionPick

    def as_namespace(self) -> dict[str, Module]:
        return {spec.name: getattr(self, spec.name) for spec in REGION_MODULES}


class _Bound:
    """A region tool as a program calls it: references resolved to regions, then the module."""

    def __init__(self, module: Module, table: RegionTable) -> None:
        self.module, self.table = module, table
        self.__name__ = module.name

    def __call__(self, image: Image, *args: Any, **kwargs: Any) -> Any:
        resolve = self.table.resolve
        if self.module.name == RegionPick.name:
            args = tuple(_resolve_list(resolve, a) if k == 0 else a for k, a in enumerate(args))
            if "regions" in kwargs:
                kwargs["regions"] = _resolve_list(resolve, kwargs["regions"])
        else:
            args = tuple(resolve(a) for a in args)
            kwargs = {k: resolve(v) for k, v in kwargs.items()}
        return self.module(image, *args, **kwargs)


def _resolve_list(resolve: Callable[[Any], Region], refs: Any) -> list[Region]:
    if not isinstance(refs, (list, tuple)) or not refs:
        raise ModuleError(f"regions must be a non-empty list of regions, got {refs!r}")
    if len(refs) == 4 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in refs) \
            and any(isinstance(v, float) for v in refs):
        raise ModuleError("regions must be a list of regions; got one box: wrap it in a list")
    return [resolve(r) for r in refs]


def bind_region_tools(regions: Sequence[Region], tools: RegionModules) -> dict[str, Callable[..., Any]]:
    """`region` and the four tools for one question's regions, ready to join its namespace."""
    table = RegionTable(regions)
    bound: dict[str, Callable[..., Any]] = {"region": table.box}
    bound.update({name: _Bound(module, table) for name, module in tools.as_namespace().items()})
    return bound
