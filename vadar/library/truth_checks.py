"""Property checks against ground truth: a helper must compute what its name claims.

A helper's name states what it claims (`vadar.library.claims`): `_objects_left_of(image, bbox)`
the objects left of the reference, `_same_color(image, a, b)` that two objects share a colour,
`_is_in_front(image, a, b)` a yes/no relation, `_height_of_object(image, prompt)` a height in
metres. Where the data set carries ground truth (CLEVR scenes list every relation and attribute;
generated scenes have exact 3D boxes, see `omni3d_bench.relations`), the helper runs in the
sandbox on sampled scenes and objects and its answer is compared with the truth. Outcomes on a
handful of questions cannot show this: a helper that returns every object passes many yes/no
questions by chance, and a pixel height passes every "which is taller" question.

A helper that runs out of time on one case fails at once: its other cases are not run, since one
that loops on some inputs would otherwise spend the time limit on each of them (92 s at a 3 s limit,
about 15 minutes at the default, for one sample of generate-and-test).

Each case calls the helper as a `watched_call` (`vadar.programs.helper_calls`): a helper that changes
an argument (`candidates.remove(reference)`) fails its check whatever it returned, and the failure
names the argument.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import permutations
from types import MappingProxyType
from typing import Any

from api_store import ApiStore, FunctionRecord
from base_modules.module import ModuleSet
from omni3d_bench.metrics import mean_relative_accuracy, score_str
from omni3d_bench.relations import (object_attribute, object_distance, object_measure, relation_holds, unique_phrase)
from omni3d_bench.types import Dataset, Question
from vadar.programs.outcome import Executor, check_infrastructure
from vadar.library.candidates import Candidate, Route
from vadar.library.claims import Claim, claim_label, claim_of, named_claim
from vadar.library.rules import unread_parameter
from vadar.library.shape_truth import CASES as SHAPE_CASES, shape_cases
from vadar.library.truth_case import ANY, SceneView, judge_shape_case
from vadar.library.truth_texts import box_index, compare_objects, describe, relation_text
from vadar.programs.namespace import program_namespace
from vadar.library.retirement import retire_helpers
from vadar.programs.answers import as_float
from vadar.programs.helper_calls import CHANGED_ARGUMENT, parameter_names, watched_call

__all__ = ["Claim", "TruthChecks", "TruthResult", "TruthVerifier", "claim_of", "recheck_library"]

_YES = ("true", "yes", "1")
# The mean credit a metric claim (scored by partial credit, not by every case) must reach, by kind,
# or by kind and value where one value follows more exactly than its kind. A distance between two
# objects follows exactly from their box centres, depths and the focal length: a correct helper earns
# 1.00 on 184 cases of generated scenes, one that leaves out the depth axis 0.59 (and was admitted
# under one level for both). An object's distance from the camera is its depth, exactly; a build
# admitted depth * focal length / image width under the level for heights. One object's height or
# width follows from its 2D box only roughly (0.51 to 0.67).
METRIC_PASS: Mapping[str, float] = MappingProxyType(
    {"measure": 0.5, "measure:camera_distance": 0.9, "distance": 0.9})
METRIC_KINDS = tuple(dict.fromkeys(key.split(":")[0] for key in METRIC_PASS))
TIMED_OUT = "ran out of time (the sandbox's time limit); its other cases were not run"


@dataclass
class TruthResult:
    """`passed` None: nothing claimed, or no scene to check against (no evidence either way)."""

    passed: bool | None
    claim: str | None = None
    cases: int = 0
    failures: list[str] = field(default_factory=list)
    credit: float | None = None  # a metric claim: the mean partial credit of its answers (MRA)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "claim": self.claim, "cases": self.cases, "failures": self.failures[:5],
                **({"credit": round(self.credit, 4)} if self.credit is not None else {})}


class TruthChecks:
    """Runs a helper on sampled ground-truth cases and compares its answers with the truth.

    A relation, an attribute or a yes/no claim must hold in every case. A metric claim (a height, a
    distance) is scored the way the benchmarks score metric answers, by mean relative accuracy
    (MRA, `omni3d_bench.metrics`), and passes when its mean over the cases reaches its kind's
    `metric_pass` (`METRIC_PASS`). For a measure of one object:
    a height from the 2D box, its depth and the focal length is off on flat objects seen from above
    (the box holds their top face) and within 25% on most others (mean MRA 0.5 on generated
    scenes; the box width instead scores 0.3 to 0.5 on 36 cases); one that returns pixels, a depth or a
    difference scores near 0. Cases off by more than
    `tolerance` are listed as failures, for the LLM to see.
    """

    def __init__(self, executor: Executor, *, images: int = 6, references: int = 4, tolerance: float = 0.25,
                 metric_pass: Mapping[str, float] = METRIC_PASS) -> None:
        self.executor, self.metric_pass = executor, metric_pass
        self.images, self.references, self.tolerance = images, references, tolerance

    def check(self, record: FunctionRecord, library: Sequence[FunctionRecord], dataset: Dataset,
              modules: ModuleSet, questions: Sequence[Question]) -> TruthResult:
        unread = unread_parameter(record.code or "")
        if unread is not None:  # no case needed: the signature promises what the body ignores
            return TruthResult(False, "reads every parameter", 0, [unread])
        claim = claim_of(record)
        if claim is None:
            return self._check_shape(record, library, dataset, modules, questions)
        result, credit = TruthResult(None, claim.label), []
        parameters = parameter_names(record.name, record.signature)
        for scene in self._scenes(record, library, dataset, modules, questions):
            for case in self._cases(claim, scene.scene, len(scene.boxes)):
                arguments = _arguments(claim, case, scene.boxes, scene.phrases)
                if arguments is None:
                    continue
                failure, earned = self._run(record.name, parameters, claim, scene.scene, scene.boxes, scene.namespace,
                                            case, arguments)
                if not _record(result, credit, scene.image_id, failure, earned):
                    return result
        level = self.metric_pass.get(f"{claim.kind}:{claim.value}", self.metric_pass[claim.kind]) \
            if claim.kind in METRIC_KINDS else None
        return _verdict(result, credit, level)

    def _check_shape(self, record: FunctionRecord, library: Sequence[FunctionRecord], dataset: Dataset,
                     modules: ModuleSet, questions: Sequence[Question]) -> TruthResult:
        """A question-shape helper on cases of every value of its relation or attribute parameter
        (`vadar.library.shape_truth`); no evidence for any other helper that claims nothing."""
        if record.name not in SHAPE_CASES:
            return TruthResult(None)
        parameters = parameter_names(record.name, record.signature)
        scenes = list(self._scenes(record, library, dataset, modules, questions))
        views = [SceneView(s.scene, s.boxes, s.phrases,
                           frozenset(i for b in modules.loc(s.image, ANY) if (i := box_index(s.boxes, b)) is not None))
                 for s in scenes]
        result, credit, level = TruthResult(None, f"question shape {record.name}"), [], None
        for view_index, case in shape_cases(record.name, views, 4 * self.references):
            if len(case.arguments) != len(parameters) - 1:
                return TruthResult(None)  # another signature than the catalogue's: its cases do not fit
            scene, level = scenes[view_index], case.level
            call = f"{record.name}(image, {', '.join(case.shown)})"
            error, value = self._execute(record.name, parameters, case.arguments, scene.namespace)
            failure, earned = ((f"{call} {error}", 0.0) if error is not None
                               else judge_shape_case(call, case, value, self.tolerance))
            if not _record(result, credit, scene.image_id, failure, earned):
                return result
        return _verdict(result, credit, level)

    def _scenes(self, record: FunctionRecord, library: Sequence[FunctionRecord], dataset: Dataset,
                modules: ModuleSet, questions: Sequence[Question]) -> Iterator[_Scene]:
        """The build scenes the cases come from (at most `images`), each with its objects' boxes in
        scene order, their phrases and the namespace the helper runs in; none without an oracle."""
        functions = [*[f for f in library if f.name != record.name], record]
        for image_id in list(dict.fromkeys(q.image_id for q in questions))[: self.images]:
            scene = dataset.scene(image_id)
            if not scene or not scene.get("objects"):
                continue
            image = dataset.image(next(q for q in questions if q.image_id == image_id))
            boxes = boxes_in_scene_order(modules, image, len(scene["objects"]))
            if boxes is None:
                continue
            yield _Scene(image_id, scene, image, boxes, _phrases(modules, image, scene, boxes),
                         program_namespace(image, modules, functions))

    def _execute(self, name: str, parameters: Sequence[str], arguments: Sequence[Any],
                 namespace: dict[str, Any]) -> tuple[str | None, Any]:
        """Run one call of the helper in the sandbox: what went wrong (None: nothing) and its value."""
        names = [f"arg_{k}" for k in range(len(arguments))]
        held = [(_parameter(parameters, k + 1), argument) for k, argument in enumerate(names)]
        code = "\n".join(watched_call(f"{name}(image, {', '.join(names)})", held)) + "\n"
        outcome = check_infrastructure(self.executor(code, {**namespace, **dict(zip(names, arguments, strict=True))}))
        if outcome.timed_out:
            return TIMED_OUT, None
        if outcome.error is not None:
            return f"failed: {outcome.error.splitlines()[-1]}", None
        return None, outcome.value

    def _cases(self, claim: Claim, scene: dict[str, Any], count: int) -> list[tuple[int, ...]]:
        n = self.references
        if claim.kind == "measure" and len(claim.inputs) == 2:  # a second object the name does not explain
            return [(i, (i + 1) % count) for i in range(min(count, 2 * n)) if count > 1]
        if claim.kind == "attribute":
            return [(i,) for i in range(min(count, 2 * n)) if object_attribute(scene, i, claim.value) is not None]
        if claim.kind in ("relation", "measure"):
            return [(i,) for i in range(min(count, n if claim.kind == "relation" else 2 * n))
                    if claim.kind == "relation" or object_measure(scene, i, claim.value) is not None]
        pairs = [(i, j) for i in range(min(count, n)) for j in range(i + 1, count)]
        if claim.kind == "same":
            return pairs[: 2 * n]
        if claim.kind == "distance":
            return [p for p in pairs if object_distance(scene, *p) is not None][: 2 * n]
        verdicts = {p: relation_holds(scene, p[0], p[1], claim.value) for p in permutations(range(count), 2)}
        true = [p for p, holds in verdicts.items() if holds is True]
        false = [p for p, holds in verdicts.items() if holds is False]
        return [p for pair in zip(true[:n], false[:n]) for p in pair] or (true + false)[:n]

    def _run(self, name: str, parameters: Sequence[str], claim: Claim, scene: dict[str, Any],
             boxes: list[list[float]], namespace: dict[str, Any], case: tuple[int, ...],
             arguments: list[Any]) -> tuple[str | None, float]:
        """What is wrong with the helper's answer in one case (None: nothing), and the credit it earns."""
        shown = ", ".join(_shown(claim, scene, case, arguments))
        call = f"{name}(image, {shown})"
        error, value = self._execute(name, parameters, arguments, namespace)
        if error is not None:
            return f"{call} {error}", 0.0
        if claim.kind in METRIC_KINDS:
            return self._compare_number(call, claim, scene, case, value)
        if claim.kind == "same":
            expected = object_attribute(scene, case[0], claim.value) == object_attribute(scene, case[1], claim.value)
            got = str(value).lower() in _YES
            failure = None if got == expected else f"{call} returned {value!r}, expected {expected}"
        elif claim.kind == "attribute":
            expected = object_attribute(scene, case[0], claim.value)
            failure = None if score_str(value, expected) >= 1.0 else (
                f"{call} returned {value!r}, but the {claim.value} of the {describe(scene, case[0])} is {expected!r}")
        elif claim.kind == "relation_test":
            expected = relation_holds(scene, case[0], case[1], claim.value)
            got = str(value).strip().lower() in _YES
            failure = None if got == expected else (
                f"{call} returned {value!r}, but the {describe(scene, case[0])} is "
                f"{'' if expected else 'not '}{relation_text(claim.value)} the {describe(scene, case[1])}")
        else:
            failure = compare_objects(call, scene, boxes, case, claim.value, value)
        return failure, 0.0 if failure else 1.0

    def _compare_number(self, call: str, claim: Claim, scene: dict[str, Any], case: tuple[int, ...],
                        value: Any) -> tuple[str | None, float]:
        if claim.kind == "distance":
            truths, what = [object_distance(scene, *case)], "the two objects are {:.2f} m apart"
        elif claim.value == "height":
            truths, what = [object_measure(scene, case[0], "height")], f"the {describe(scene, case[0])} is {{:.2f}} m tall"
        else:
            depth = scene["objects"][case[0]].get("depth")
            truths = [object_measure(scene, case[0], "camera_distance"), depth]
            what = f"the {describe(scene, case[0])} is {{:.2f}} m from the camera"
        truths = [t for t in truths if t is not None]
        number = as_float(value)
        if number is None or not math.isfinite(number):
            return f"{call} returned {value!r}, not a number of metres; " + what.format(truths[0]), 0.0
        earned = max(mean_relative_accuracy(number, t) for t in truths)
        if any(abs(number - t) <= self.tolerance * abs(t) for t in truths):
            return None, earned
        return f"{call} returned {number:.3g}, but " + what.format(truths[0]), earned


def boxes_in_scene_order(modules: ModuleSet, image: Any, count: int) -> list[list[float]] | None:
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


@dataclass(frozen=True)
class _Scene:
    """One build scene a helper's cases run on."""

    image_id: str
    scene: dict[str, Any]
    image: Any
    boxes: list[list[float]]
    phrases: dict[int, str]
    namespace: dict[str, Any]


def _record(result: TruthResult, credit: list[float], image_id: str, failure: str | None, earned: float) -> bool:
    """Count one case; False when it ran out of time: the helper fails at once, its other cases unrun."""
    result.cases += 1
    credit.append(earned)
    if failure is not None:
        result.failures.append(f"{image_id}: {failure}")
        if failure.endswith(TIMED_OUT):
            result.passed = False
            return False
    return True


def _verdict(result: TruthResult, credit: Sequence[float], level: float | None) -> TruthResult:
    """Passed when every case held, or for a measure (`level`) when its mean credit reaches the level;
    never when it changed an argument, whatever credit it earned: its callers' lists would be wrong."""
    if result.cases:
        if level is not None:
            result.credit = sum(credit) / len(credit)
            result.passed = result.credit >= level
        else:
            result.passed = not result.failures
        if any(CHANGED_ARGUMENT in failure for failure in result.failures):
            result.passed = False
    return result


class TruthVerifier:
    """Ground truth as the API agent's verifier: the claim a name makes, and its cases run on one
    implementation (generate-and-test, `vadar.agents.helper_search`)."""

    def __init__(self, checks: TruthChecks, store: ApiStore, dataset: Dataset, modules: ModuleSet,
                 questions: Sequence[Question]) -> None:
        self.checks, self.store, self.dataset, self.modules, self.questions = checks, store, dataset, modules, questions

    def claim(self, name: str, signature: str) -> str | None:
        return claim_label(name, signature)

    def convention(self, name: str, signature: str) -> str | None:
        """How the data set's ground truth defines what the name claims (`omni3d_bench.relations`)."""
        claim = named_claim(name, signature)
        if claim is None:
            return None
        conventions = getattr(self.dataset, "conventions", {})
        if claim.kind == "attribute":  # one object's attribute; its value alone names a shared attribute
            return conventions.get(claim.label)
        return conventions.get(claim.value)

    def verify(self, name: str, signature: str, docstring: str, code: str,
               dependencies: Sequence[str]) -> TruthResult:
        helper = Candidate(Route.PROPOSAL, name, signature, docstring, code, dependencies=tuple(dependencies))
        library = self.store.library(with_candidates=True)
        return self.checks.check(helper, library, self.dataset, self.modules, self.questions)  # type: ignore[arg-type]


def recheck_library(store: ApiStore, checks: TruthChecks, dataset: Dataset, modules: ModuleSet,
                    questions: Sequence[Question], *, retire: bool = False) -> dict[str, TruthResult]:
    """Check every implemented helper against ground truth now; with `retire`, retire those that fail.

    Checks grow: a library admitted under older checks is vetted again under today's. A retired
    helper leaves the prompts (its history stays), and so do the helpers that call it.
    """
    library = store.library()
    results = {record.name: checks.check(record, library, dataset, modules, questions) for record in library}
    if not retire:
        return results
    reasons = {name: f"its ground-truth check failed: {r.failures[0]}" for name, r in results.items()
               if r.passed is False}
    retire_helpers(store, reasons, mode="truth-check",
                   evidence={name: {"truth_check": r.to_dict()} for name, r in results.items()})
    return results


def _phrases(modules: ModuleSet, image: Any, scene: dict[str, Any], boxes: list[list[float]]) -> dict[int, str]:
    """A phrase per object that `loc` resolves to exactly that object's box."""
    phrases = {}
    for index in range(len(boxes)):
        phrase = unique_phrase(scene, index)
        if phrase is None:
            continue
        try:
            found = [list(map(float, b)) for b in modules.loc(image, phrase)]
        except Exception:  # noqa: BLE001 - a phrase the oracle does not read is not used
            continue
        if found == [boxes[index]]:
            phrases[index] = phrase
    return phrases


def _arguments(claim: Claim, case: tuple[int, ...], boxes: list[list[float]],
               phrases: dict[int, str]) -> list[Any] | None:
    """The call's arguments after `image`: a phrase where the parameter takes one, every box where it
    takes the candidates to choose from, else the case's box."""
    arguments: list[Any] = []
    for kind, index in _slots(claim, case):
        if index is None:
            arguments.append([list(box) for box in boxes])
        elif kind == "phrase" and index not in phrases:
            return None
        else:
            arguments.append(phrases[index] if kind == "phrase" else boxes[index])
    return arguments


def _shown(claim: Claim, scene: dict[str, Any], case: tuple[int, ...], arguments: list[Any]) -> list[str]:
    """Each argument as a failing case shows it: the phrase, the box of which object, or the candidates."""
    return ["every object's box" if index is None else repr(argument) if isinstance(argument, str)
            else f"box of {describe(scene, index)}"
            for (_, index), argument in zip(_slots(claim, case), arguments, strict=True)]


def _parameter(parameters: Sequence[str], position: int) -> str:
    """The name of the parameter at `position` (0 is `image`), as a changed argument's refusal names it."""
    return parameters[position] if position < len(parameters) else f"argument {position + 1}"


def _slots(claim: Claim, case: tuple[int, ...]) -> list[tuple[str, int | None]]:
    """Each input of the claim with the case's object it takes (None: the candidates, every object)."""
    indices = iter(case)
    return [(kind, None if kind == "candidates" else next(indices)) for kind in claim.inputs]
