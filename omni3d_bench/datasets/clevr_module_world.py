"""A CLEVR world seen only through the five predefined modules, for running gold programs.

This proves the modules, the data and the metric end to end before any LLM is involved: if the
oracle modules are right, every gold program reproduces its gold answer. Each CLEVR function is
expressed with module calls a generated program could make itself:

- object sets are lists of boxes from `loc(image, "objects")`;
- filter_<attr> / query_<attr> / same_<attr> ask `vqa(image, "What <attr> is this object?", box)`
  per box. This is chosen over `loc` prompts because a filter narrows an *existing* set, which
  with `loc` would need box matching; vqa states the attribute test directly;
- relate: front/behind compare `depth`; left/right compare camera-frame X, back-projected from
  the box centre u and the depth Z as X = (u - cx) * Z / fx (cx = image width / 2; fx is a
  positive constant and cancels in the comparison). Neither uses a margin: CLEVR's relations
  hold for every ordered pair, since objects were placed at least 0.4 apart along each axis;
- "other objects" (relate, same_<attr>), union and intersect use `same_object` for identity.

Mismatches: none on the 1040 CLEVR dev questions (accuracy 1.000). The one possible source is
left/right: the box centre is not exactly the projection of the object's centre (perspective
widens the near side of a silhouette; image-border clipping shifts boxes), so pairs whose camera
X differs by a few centimetres can flip. Over all 10,696 ordered object pairs of the 267 CLEVR
scenes this flips 2 pairs (0.02%; pixel x alone would flip 77, 0.7%), and front/behind by depth
flips none; no dev question depends on a flipped pair. Any other mismatch is a module or data
fault, which `vadar eval-gold --show-mismatches` lists with the program's output or error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from base_modules.types import BBox, Image
from omni3d_bench.datasets.clevr_programs import ProgramError, answer

ATTRIBUTE_QUESTIONS = {
    "color": "What color is this object?",
    "shape": "What shape is this object?",
    "material": "What material is this object made of?",
    "size": "What size is this object?",
}
RELATIONS = ("left", "right", "front", "behind")


class ModuleWorld:
    """One image seen through a module namespace (name -> callable); objects are boxes."""

    def __init__(self, modules: Mapping[str, Callable[..., Any]], image: Image) -> None:
        self.m = modules
        self.image = image

    def objects(self) -> list[BBox]:
        return list(self.m["loc"](self.image, "objects"))

    def attribute(self, box: BBox, attribute: str) -> str:
        return str(self.m["vqa"](self.image, ATTRIBUTE_QUESTIONS[attribute], box)).strip().lower()

    def same(self, a: BBox, b: BBox) -> bool:
        return bool(self.m["same_object"](self.image, a, b))

    def position(self, box: BBox) -> tuple[float, float]:
        """(camera X up to the positive factor 1/fx, depth Z) of the object in `box`."""
        z = float(self.m["depth"](self.image, box))
        u = (box[0] + box[2]) / 2.0
        return (u - self.image.width / 2.0) * z, z

    def relate(self, box: BBox, relation: str) -> list[BBox]:
        if relation not in RELATIONS:
            raise ProgramError(f"unknown relation {relation!r}")
        x0, z0 = self.position(box)
        out = []
        for other in self.objects():
            if self.same(other, box):
                continue
            x, z = self.position(other)
            if (
                (relation == "left" and x < x0) or (relation == "right" and x > x0)
                or (relation == "front" and z < z0) or (relation == "behind" and z > z0)
            ):
                out.append(other)
        return out


def run_gold_program(program: list[dict[str, Any]], image: Image,
                     modules: Mapping[str, Callable[..., Any]]) -> str:
    """The answer of a CLEVR program computed with module calls only, as a CLEVR string."""
    return answer(program, ModuleWorld(modules, image))
