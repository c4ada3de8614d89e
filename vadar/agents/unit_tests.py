"""Unit tests for visual programs (ViUniT): tiny scenes with known answers, written by the model.

A program can be right on paper and still count the wrong objects. Oracle modules need no
pixels, only annotations, so the model can write two or three small scenes for the question with
the answer it expects on each; every candidate program then runs on them with oracle modules. A
program that fails its tests is sent back once with the failing scene; with several samples,
programs that pass fewer tests are outvoted.

Scenes come in the data set's own kind (`SceneKind`): CLEVR objects placed as seen from the
camera, or, for the generated benchmark, objects with a class, colour, material, camera-frame
centre and metric size, from which the benchmark's annotation format is filled in
(`omni3d_bench.generator.sketch`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from base_modules.oracle.clevr_vocab import SYNONYMS
from omni3d_bench.generator import sketch
from vadar import prompts
from vadar.programs.answers import normalize_answer, same_answer
from vadar.programs.outcome import Executor, check_infrastructure, program_error
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import LLMCost, StepLoop
from vadar.programs.structured import ask_structured, json_object, response_format
from vadar.llm.chat import ChatModel, Role

SceneNamespace = Callable[[Sequence[Mapping[str, Any]]], Mapping[str, Any]]
"""Objects of a test scene -> a program namespace whose modules are oracles over that scene."""


def _scenes_schema(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"scenes": {"type": "array", "minItems": 1, "maxItems": 3, "items": {
            "type": "object",
            "properties": {"objects": {"type": "array", "minItems": 1, "maxItems": 6, "items": obj},
                           "answer": {"type": ["string", "number"]}},
            "required": ["objects", "answer"], "additionalProperties": False}}},
        "required": ["scenes"],
        "additionalProperties": False,
    }


def _no_check(objects: Sequence[Mapping[str, Any]]) -> None:
    """CLEVR scenes need none: any placement is a scene (the camera is known)."""


@dataclass(frozen=True)
class SceneKind:
    """How the model writes test scenes for one kind of data set, and how they are checked and described."""

    schema: dict[str, Any]  # the reply's JSON schema, sent as `response_format`
    prompt: str  # the system prompt's template
    prompt_values: Mapping[str, Any]
    describe_object: Callable[[Mapping[str, Any]], str]
    check: Callable[[Sequence[Mapping[str, Any]]], None] = _no_check  # ValueError: the scene cannot be built
    measure_tolerance: float | None = None  # relative error allowed where an answer is a decimal; None: the vote's
    max_tokens: int = 600  # the reply's length: 2-3 scenes of a few objects

    def describe(self, objects: Sequence[Mapping[str, Any]]) -> str:
        return "; ".join(self.describe_object(o) for o in objects)


def _sketchable(objects: Sequence[Mapping[str, Any]]) -> None:
    """SketchError (a ValueError) when the objects leave the image or overlap."""
    sketch.sketch_scene(objects)


_VALUES = {name: sorted(set(words.values())) for name, words in SYNONYMS.items()}
_OBJECT = {
    "type": "object",
    "properties": {
        **{name: {"type": "string", "enum": values} for name, values in _VALUES.items()},
        "right": {"type": "number", "minimum": -3, "maximum": 3},
        "behind": {"type": "number", "minimum": -3, "maximum": 3},
    },
    "required": [*_VALUES, "right", "behind"],
    "additionalProperties": False,
}
SCHEMA: dict[str, Any] = _scenes_schema(_OBJECT)
CLEVR_SCENES = SceneKind(SCHEMA, "unit_tests_system", {"values": _VALUES},
                         lambda o: f"{o['size']} {o['color']} {o['material']} {o['shape']} at right={o['right']:g}, "
                                   f"behind={o['behind']:g}")
"""Objects with CLEVR's attributes placed by `right` and `behind` as seen from the camera."""

BENCH_SCENES = SceneKind(
    _scenes_schema(sketch.OBJECT_SCHEMA), "unit_tests_system_bench",
    {"values": {name: sketch.OBJECT_SCHEMA["properties"][name]["enum"] for name in ("category", "color", "material")}},
    sketch.describe, _sketchable, measure_tolerance=0.4, max_tokens=900)  # 8 fields an object
"""Objects of the generated benchmark: class, colour, material, camera-frame centre (x, z) and size.

Decimal answers (metres) pass within 40%: on these scenes (camera 18 degrees down) a right program
measuring from a 2D box and depth is off by up to a third for small near objects; a wrong object
or quantity usually by more."""

@dataclass(frozen=True)
class UnitTest:
    objects: list[dict[str, Any]]
    answer: Any


def parse_tests(text: str, kind: SceneKind = CLEVR_SCENES) -> list[UnitTest]:
    """The scenes in `text`, or ValueError saying what is wrong with them."""
    data = json_object(text, kind.schema)
    for number, scene in enumerate(data["scenes"], start=1):
        try:
            kind.check(scene["objects"])
        except ValueError as exc:
            raise ValueError(f"scene {number}: {exc}") from None
    return [UnitTest(scene["objects"], normalize_answer(scene["answer"])) for scene in data["scenes"]]


@dataclass(frozen=True)
class TestScenes:
    """A data set's kind of test scene and how one becomes oracle modules."""

    __test__ = False  # not a pytest class

    kind: SceneKind
    namespace: SceneNamespace


@dataclass
class UnitTestRecord:
    """The tests written for one question (empty when refused twice), why they were refused, and how
    many the answer's program passed (None when no program ran on them); stored under "unit_tests"
    in results.jsonl."""

    key: ClassVar[str] = "unit_tests"

    tests: list[UnitTest] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    passed: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tests": [{"objects": t.objects, "answer": t.answer} for t in self.tests],
                "refused": list(self.refused), "passed": self.passed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UnitTestRecord:
        return cls(_tests(data.get("tests")), list(data.get("refused") or []), data.get("passed"))

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> UnitTestRecord | None:
        """The record in a results line written before the records (`unit_tests`, `unit_tests_refused`,
        `tests_passed` among the per-question fields)."""
        if "unit_tests" not in extra:
            return None
        return cls(_tests(extra.get("unit_tests")), list(extra.get("unit_tests_refused") or []),
                   extra.get("tests_passed"))


def _tests(written: Any) -> list[UnitTest]:
    return [UnitTest(list(test["objects"]), test["answer"]) for test in written or []]


class TestWriter:
    """Asks for the scenes under a JSON schema; refused ones are asked again once."""

    __test__ = False  # not a pytest class

    def __init__(self, llm: ChatModel) -> None:
        self.llm = llm

    def write(self, question: str, kind: SceneKind = CLEVR_SCENES, cost: LLMCost | None = None) -> UnitTestRecord:
        sampling = Sampling(max_tokens=kind.max_tokens, retry_temperature_step=0.0)
        loop = StepLoop(self.llm, sampling, max_steps=2,
                        response_format=response_format("unit_tests", kind.schema), role=Role.UNIT_TESTS)
        messages = [{"role": "system", "content": prompts.render(kind.prompt, **kind.prompt_values)},
                    {"role": "user", "content": prompts.render("question", question=question)}]
        tests, refused = ask_structured(loop, messages, lambda text: parse_tests(text, kind), cost)
        return UnitTestRecord(tests or [], refused)


@dataclass(frozen=True)
class UnitCheck:
    """A question's tests, ready to run programs on: each scene becomes an oracle namespace."""

    tests: Sequence[UnitTest]
    scenes: TestScenes
    executor: Executor
    rel_tol: float

    def failure(self, program: str, tests: Sequence[UnitTest] | None = None) -> str | None:
        """What the program got wrong on the first test it fails, or None when it passes them all."""
        for test in self.tests if tests is None else tests:
            result = check_infrastructure(self.executor(program, self.scenes.namespace(test.objects)))
            error = program_error(result)
            got = None if error else normalize_answer(result.value)
            if error is None and same_answer(got, test.answer, self._tolerance(got, test.answer)):
                continue
            outcome = f"failed with {error.strip().splitlines()[-1]}" if error else f"answered {got!r}"
            return (f"On a test scene with {self.scenes.kind.describe(test.objects)}, the program {outcome}; "
                    f"the expected answer is {test.answer!r}.")
        return None

    def _tolerance(self, got: Any, expected: Any) -> float:
        """Counts match exactly (to the vote's tolerance); where either side is a decimal (a measurement),
        within the scene kind's tolerance, if it has one."""
        measure = self.scenes.kind.measure_tolerance
        decimal = isinstance(got, float) or isinstance(expected, float)
        return max(self.rel_tol, measure) if decimal and measure is not None else self.rel_tol

    def passed(self, program: str) -> int:
        """How many of the tests the program passes."""
        return sum(self.failure(program, [test]) is None for test in self.tests)
