"""The object classes, colours and materials the benchmark draws from, with metric sizes.

Each class is built from simple parts (boxes, capped cylinders, spheres) in its own frame: origin
at the centre of its footprint on the ground, z up. Parts exactly fill the class's box
[width (x), length (y), height (z)], so the annotated 3D box is the object's true extent.
Sizes are nominal metres; each instance is scaled by a per-axis jitter so that two chairs differ.
"""

from __future__ import annotations

from dataclasses import dataclass

Part = tuple
"""("box", centre xyz, half-extents xyz) | ("cylinder", centre xy, z0, z1, radius) |
("sphere", centre xyz, radius), all in the object frame, metres."""

COLORS: dict[str, tuple[float, float, float]] = {
    "red": (0.75, 0.08, 0.07), "green": (0.10, 0.55, 0.12), "blue": (0.08, 0.20, 0.75),
    "yellow": (0.85, 0.75, 0.08), "white": (0.85, 0.85, 0.85), "black": (0.04, 0.04, 0.04),
    "brown": (0.40, 0.22, 0.08), "purple": (0.45, 0.12, 0.60), "orange": (0.90, 0.40, 0.05),
}
"""Colour name -> linear RGB reflectance."""

MATERIALS = ("wood", "metal", "plastic")
"""wood renders matte (diffuse), plastic glossy, metal as a rough conductor."""


@dataclass(frozen=True)
class ObjectClass:
    name: str
    size: tuple[float, float, float]  # nominal width (x), length (y), height (z) in metres
    materials: tuple[str, ...]
    synonyms: tuple[str, ...] = ()
    plural: str = ""

    @property
    def plural_name(self) -> str:
        return self.plural or f"{self.name}s"

    def parts(self, w: float, length: float, h: float) -> list[Part]:
        return PART_BUILDERS[self.name](w, length, h)


def _legs(w: float, length: float, z1: float, r: float) -> list[Part]:
    """Four round legs in the footprint's corners, from the ground to z1."""
    return [("cylinder", (sx * (w / 2 - r), sy * (length / 2 - r)), 0.0, z1, r)
            for sx in (-1, 1) for sy in (-1, 1)]


def _chair(w: float, length: float, h: float) -> list[Part]:
    seat = 0.48 * h
    return [*_legs(w, length, seat - 0.04, 0.02),
            ("box", (0.0, 0.0, seat - 0.02), (w / 2, length / 2, 0.02)),
            ("box", (0.0, length / 2 - 0.025, (seat + h) / 2), (w / 2, 0.025, (h - seat) / 2))]


def _table(w: float, length: float, h: float) -> list[Part]:
    return [*_legs(w, length, h - 0.04, 0.03), ("box", (0.0, 0.0, h - 0.02), (w / 2, length / 2, 0.02))]


def _stool(w: float, length: float, h: float) -> list[Part]:
    r = min(w, length) / 2
    return [*_legs(1.4 * r, 1.4 * r, h - 0.04, 0.018), ("cylinder", (0.0, 0.0), h - 0.04, h, r)]


def _block(w: float, length: float, h: float) -> list[Part]:
    return [("box", (0.0, 0.0, h / 2), (w / 2, length / 2, h / 2))]


def _ball(w: float, length: float, h: float) -> list[Part]:
    return [("sphere", (0.0, 0.0, h / 2), h / 2)]


def _round(w: float, length: float, h: float) -> list[Part]:
    return [("cylinder", (0.0, 0.0), 0.0, h, min(w, length) / 2)]


def _lamp(w: float, length: float, h: float) -> list[Part]:
    r = min(w, length) / 2
    shade = 0.22 * h
    return [("cylinder", (0.0, 0.0), 0.0, 0.03, 0.7 * r),
            ("cylinder", (0.0, 0.0), 0.03, h - shade, 0.015),
            ("cylinder", (0.0, 0.0), h - shade, h, r)]


PART_BUILDERS = {"chair": _chair, "table": _table, "stool": _stool, "cabinet": _block,
                 "box": _block, "book": _block, "ball": _ball, "bin": _round, "mug": _round,
                 "lamp": _lamp}

CLASSES: tuple[ObjectClass, ...] = (
    ObjectClass("chair", (0.46, 0.46, 0.90), ("wood", "metal", "plastic")),
    ObjectClass("table", (1.20, 0.70, 0.75), ("wood", "metal"), ("desk",)),
    ObjectClass("stool", (0.36, 0.36, 0.65), ("wood", "metal", "plastic")),
    ObjectClass("cabinet", (0.80, 0.45, 1.10), ("wood", "metal"), ("cupboard", "dresser")),
    ObjectClass("box", (0.45, 0.35, 0.32), ("wood", "plastic"), ("crate", "carton"), "boxes"),
    ObjectClass("ball", (0.24, 0.24, 0.24), ("plastic", "metal"), ("sphere",)),
    ObjectClass("lamp", (0.42, 0.42, 1.55), ("metal", "plastic"), ("floor lamp",)),
    ObjectClass("bin", (0.34, 0.34, 0.55), ("metal", "plastic"), ("trash can", "trashcan",
                                                                   "bucket", "barrel")),
    ObjectClass("mug", (0.10, 0.10, 0.12), ("plastic", "metal"), ("cup",)),
    ObjectClass("book", (0.26, 0.19, 0.05), ("wood", "plastic"), ()),
)
"""The catalogue, in a fixed order (the generator's random draws index into it)."""

BY_NAME = {c.name: c for c in CLASSES}
SIZE_JITTER = 0.15
"""Each axis of an instance is its class's nominal size times a factor in [1 - j, 1 + j]."""
