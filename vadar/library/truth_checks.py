"""Property checks against ground truth: a helper that claims a relation must return exactly it.

A helper's name states what it claims: `_objects_left_of(image, bbox) -> list[BBox]` claims the
objects left of the reference, `_same_color(image, a, b)` that two objects share a color. Where
the data set carries ground truth (CLEVR scenes list every relation and attribute; generated
scenes have exact boxes and depth, see `omni3d_bench.relations`), the helper runs in the sandbox
on sampled scenes and objects, and its answer is compared with the truth: the right objects, none
missing, never the reference itself. Outcomes on a handful of questions cannot show this; a
helper that returns every object passes many yes/no questions by chance and fails here at once.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from api_store import FunctionRecord
from base_modules.module import ModuleSet
from omni3d_bench.relations import ATTRIBUTES, object_attribute, related_objects
from omni3d_bench.types import Dataset, Question
from vadar.agents.outcome import Executor, check_infrastructure
from vadar.library.namespace import program_namespace

_RELATION_WORDS = {"left": "left", "right": "right", "front": "front", "behind": "behind", "back": "behind"}
_ATTRIBUTE_WORDS = {"color": "color", "colour": "color", "shape": "shape", "material": "material", "size": "size"}


@dataclass(frozen=True)
class Claim:
    """What a helper's name and signature say it computes: a relation list or a shared attribute."""

    kind: str  # "relation" or "same"
    value: str


@dataclass
class TruthResult:
    """`passed` None: nothing claimed, or no scene to check against (no evidence either way)."""

    passed: bool | None
    claim: str | None = None
    cases: int = 0
    failures: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "claim": self.claim, "cases": self.cases, "failures": self.failures[:5]}


def claim_of(record: FunctionRecord) -> Claim | None:
    """The checkable claim of a helper's name and signature, if it makes one."""
    words = [w for w in re.split(r"_+", record.name.lower()) if w]
    try:
        node = ast.parse(f"def f{record.signature.strip().rstrip(':')}: pass").body[0]
    except SyntaxError:
        return None
    assert isinstance(node, ast.FunctionDef)
    required = len(node.args.args) - len(node.args.defaults)
    returns = ast.unparse(node.returns).lower() if node.returns else ""
    if "not" in words:
        return None
    relations = {_RELATION_WORDS[w] for w in words if w in _RELATION_WORDS}
    if len(relations) == 1 and required == 2 and returns.startswith("list"):
        return Claim("relation", relations.pop())
    attributes = {_ATTRIBUTE_WORDS[w] for w in words if w in _ATTRIBUTE_WORDS}
    if "same" in words and len(attributes) == 1 and required == 3:
        return Claim("same", attributes.pop())
    return None


class TruthChecks:
    """Runs a helper on sampled ground-truth cases and compares its answers with the truth."""

    def __init__(self, executor: Executor, *, images: int = 3, references: int = 4) -> None:
        self.executor = executor
        self.images, self.references = images, references

    def check(self, record: FunctionRecord, library: Sequence[FunctionRecord], dataset: Dataset,
              modules: ModuleSet, questions: Sequence[Question]) -> TruthResult:
        claim = claim_of(record)
        if claim is None:
            return TruthResult(None)
        result = TruthResult(None, f"{claim.kind}:{claim.value}")
        functions = [*[f for f in library if f.name != record.name], record]
        for image_id in list(dict.fromkeys(q.image_id for q in questions))[: self.images]:
            scene = dataset.scene(image_id)
            if not scene or not scene.get("objects"):
                continue
            question = next(q for q in questions if q.image_id == image_id)
            image = dataset.image(question)
            boxes = self._boxes_in_scene_order(modules, image, len(scene["objects"]))
            if boxes is None:
                continue
            namespace = program_namespace(image, modules, functions)
            for case in self._cases(claim, scene, len(boxes)):
                failure = self._run(record.name, claim, scene, boxes, namespace, case)
                result.cases += 1
                if failure is not None:
                    result.failures.append(f"{image_id}: {failure}")
        if result.cases:
            result.passed = not result.failures
        return result

    @staticmethod
    def _boxes_in_scene_order(modules: ModuleSet, image: Any, count: int) -> list[list[float]] | None:
        """Each scene object's box from `loc`, indexed like the scene file; None without an oracle."""
        index_of = getattr(modules.loc, "annotation_index", None)
        if index_of is None:
            return None
        try:
            boxes = [list(map(float, b)) for b in modules.loc(image, "objects")]
            placed = {index_of(image, b): b for b in boxes}
        except Exception:  # noqa: BLE001 - a scene the oracle cannot read gives no evidence
            return None
        return [placed[i] for i in range(count)] if sorted(placed) == list(range(count)) else None

    def _cases(self, claim: Claim, scene: dict[str, Any], count: int) -> list[tuple[int, ...]]:
        if claim.kind == "relation":
            return [(i,) for i in range(min(count, self.references))]
        return [(i, j) for i in range(min(count, self.references)) for j in range(i + 1, count)][: 2 * self.references]

    def _run(self, name: str, claim: Claim, scene: dict[str, Any], boxes: list[list[float]],
             namespace: dict[str, Any], case: tuple[int, ...]) -> str | None:
        arguments = ", ".join(f"box_{k}" for k in range(len(case)))
        code = f"final_result = {name}(image, {arguments})\n"
        values = {f"box_{k}": boxes[i] for k, i in enumerate(case)}
        outcome = check_infrastructure(self.executor(code, {**namespace, **values}))
        described = " and ".join(_describe(scene, i) for i in case)
        if outcome.error is not None:
            return f"{name} failed on {described}: {outcome.error.splitlines()[-1]}"
        if claim.kind == "same":
            expected = object_attribute(scene, case[0], claim.value) == object_attribute(scene, case[1], claim.value)
            got = str(outcome.value).lower() in ("true", "yes", "1")
            return None if got == expected else f"{described}: returned {outcome.value!r}, expected {expected}"
        truth = related_objects(scene, case[0], claim.value)
        if truth is None:
            return None
        returned = outcome.value if isinstance(outcome.value, list) else []
        found = {_index(boxes, b) for b in returned}
        if None in found:
            return f"{name}(image, box of {described}) returned something that is not one object's box"
        if case[0] in found:
            return f"{name}(image, box of {described}) returned the reference object itself"
        if found != truth:
            missing = sorted(truth - found)
            extra = sorted(found - truth)
            return (f"{name}(image, box of {described}): missing {[_describe(scene, i) for i in missing]}, "
                    f"wrongly included {[_describe(scene, i) for i in extra]}")
        return None


def _index(boxes: list[list[float]], box: Any) -> int | None:
    try:
        wanted = [float(v) for v in box]
    except (TypeError, ValueError):
        return None
    return next((i for i, b in enumerate(boxes) if b == wanted), None)


def _describe(scene: dict[str, Any], index: int) -> str:
    words = [object_attribute(scene, index, a) for a in ATTRIBUTES if a != "shape"]
    shape = object_attribute(scene, index, "shape") or object_attribute(scene, index, "category") or "object"
    return " ".join([*(w for w in words if w), shape]) + f" #{index}"
