"""One ground-truth case of a question-shape helper, the scene it is built from, and how an answer is
judged against it (`shape_truth` makes the cases of CLEVR's shapes, `measure_truth` those of measures).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from omni3d_bench.metrics import mean_relative_accuracy
from omni3d_bench.relations import ATTRIBUTES, RELATIONS, object_attribute

ANY = "objects"  # the description every case of a count or existence gives: every object `loc` finds
_YES = ("true", "yes")
_VALUES = frozenset((*RELATIONS, *ATTRIBUTES, "more", "fewer", "equal"))


@dataclass(frozen=True)
class ShapeCase:
    """One call of a shape helper after `image`, the truth it must return and how a failure shows it."""

    arguments: tuple[Any, ...]
    shown: tuple[str, ...]  # each argument as a failing case names it
    expected: bool | int | float | str
    level: float | None = None  # a measure: the mean credit (MRA) its cases must reach; None: exact
    counted: bool = False  # the helper returns boxes; `expected` is how many

    @property
    def value(self) -> str:
        """The relation, attribute or order the case tries (a chain's first relation): cases are taken
        value by value in turn."""
        flat = [a for argument in self.arguments for a in (argument if isinstance(argument, list) else [argument])]
        return next((a for a in flat if isinstance(a, str) and a in _VALUES), "")


@dataclass(frozen=True)
class SceneView:
    """One build scene as the cases see it: its annotation, each object's box (scene order), a phrase
    `loc` resolves to exactly each object, and the objects `loc` finds for "objects"."""

    scene: dict[str, Any]
    boxes: list[list[float]]
    phrases: dict[int, str]
    everything: frozenset[int]

    def attribute(self, index: int, attribute: str) -> str | None:
        value = object_attribute(self.scene, index, attribute)
        return None if value is None else str(value)

    def box(self, index: int) -> tuple[list[float], str]:
        return self.boxes[index], f"box of {self.describe(index)}"

    def describe(self, index: int) -> str:
        return self.phrases.get(index) or f"object #{index}"

    def known(self, *indices: int) -> list[str]:
        """The attributes every one of `indices` has in this scene (generated scenes have no shape or size)."""
        return [a for a in ATTRIBUTES if all(self.attribute(i, a) is not None for i in indices)]


CaseMaker = Callable[[SceneView], Iterator[ShapeCase]]


def judge_shape_case(call: str, case: ShapeCase, value: Any, tolerance: float = 0.25) -> tuple[str | None, float]:
    """What is wrong with the helper's answer in one case (None: nothing) and the credit it earns: a
    measure earns its MRA and fails when off by more than `tolerance`; any other answer is exact."""
    expected = case.expected
    if case.counted:
        if not isinstance(value, list):
            return f"{call} returned {value!r}, not a list of boxes; the truth is {expected!r} boxes", 0.0
        return (None, 1.0) if len(value) == expected else \
            (f"{call} returned {len(value)} boxes, but the truth is {expected}", 0.0)
    if case.level is not None:
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if number is None:
            return f"{call} returned {value!r}, not a number; the truth is {expected:.3g}", 0.0
        credit = mean_relative_accuracy(number, expected)
        close = abs(number - float(expected)) <= tolerance * abs(float(expected))
        return (None if close else f"{call} returned {number:.3g}, but the truth is {expected:.3g}"), credit
    if isinstance(expected, bool):
        got: Any = str(value).strip().lower() in _YES if not isinstance(value, bool) else value
    elif isinstance(expected, int):
        got = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    else:
        got = str(value).strip().lower() if isinstance(value, str) else None
        expected = str(expected).lower()
    if got == expected:
        return None, 1.0
    return f"{call} returned {value!r}, but the truth is {case.expected!r}", 0.0
