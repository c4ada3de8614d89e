"""Unit tests for visual programs (ViUniT): tiny scenes with known answers, written by the model.

A program can be right on paper and still count the wrong objects. Oracle modules need no
pixels, only annotations, so the model can write two or three small scenes for the question
(objects with CLEVR attributes and positions as seen from the camera) with the answer it expects
on each; every candidate program then runs on them with oracle modules. A program that fails its
tests is sent back once with the failing scene; with several samples, programs that pass fewer
tests are outvoted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from base_modules.oracle.clevr_vocab import SYNONYMS
from vadar import prompts
from vadar.agents.answers import normalize_answer
from vadar.agents.outcome import Executor, check_infrastructure, program_error
from vadar.agents.sampling import Sampling
from vadar.agents.step_loop import LLMCost, StepLoop
from vadar.agents.structured import ask_structured, json_object, response_format
from vadar.agents.voting import same_answer
from vadar.llm.chat import ChatModel

SceneNamespace = Callable[[Sequence[Mapping[str, Any]]], Mapping[str, Any]]
"""Objects of a test scene -> a program namespace whose modules are oracles over that scene."""

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
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"scenes": {"type": "array", "minItems": 1, "maxItems": 3, "items": {
        "type": "object",
        "properties": {"objects": {"type": "array", "minItems": 1, "maxItems": 6, "items": _OBJECT},
                       "answer": {"type": ["string", "number"]}},
        "required": ["objects", "answer"], "additionalProperties": False}}},
    "required": ["scenes"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = response_format("unit_tests", SCHEMA)
WRITE_TESTS = Sampling(max_tokens=600, retry_temperature_step=0.0)


@dataclass(frozen=True)
class UnitTest:
    objects: list[dict[str, Any]]
    answer: Any

    def describe(self) -> str:
        return "; ".join(f"{o['size']} {o['color']} {o['material']} {o['shape']} at right={o['right']:g}, "
                         f"behind={o['behind']:g}" for o in self.objects)


def parse_tests(text: str) -> list[UnitTest]:
    """The scenes in `text`, or ValueError saying what is wrong with them."""
    data = json_object(text, SCHEMA)
    return [UnitTest(scene["objects"], normalize_answer(scene["answer"])) for scene in data["scenes"]]


@dataclass
class UnitTests:
    """The tests written for one question (empty when refused twice) and why they were refused."""

    tests: list[UnitTest] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class TestWriter:
    """Asks for the scenes under a JSON schema; refused ones are asked again once."""

    __test__ = False  # not a pytest class

    def __init__(self, llm: ChatModel, max_reply_tokens: int | None = None) -> None:
        self.loop = StepLoop(llm, WRITE_TESTS, max_steps=2, max_reply_tokens=max_reply_tokens,
                             response_format=RESPONSE_FORMAT)

    def write(self, question: str, cost: LLMCost | None = None) -> UnitTests:
        messages = [{"role": "system", "content": prompts.render("unit_tests_system", values=_VALUES)},
                    {"role": "user", "content": prompts.render("question", question=question)}]
        tests, refused = ask_structured(self.loop, messages, parse_tests, cost)
        return UnitTests(tests or [], refused)


@dataclass(frozen=True)
class UnitCheck:
    """A question's tests, ready to run programs on: each scene becomes an oracle namespace."""

    tests: Sequence[UnitTest]
    namespace_for: SceneNamespace
    executor: Executor
    rel_tol: float

    def failure(self, program: str, tests: Sequence[UnitTest] | None = None) -> str | None:
        """What the program got wrong on the first test it fails, or None when it passes them all."""
        for test in self.tests if tests is None else tests:
            result = check_infrastructure(self.executor(program, self.namespace_for(test.objects)))
            error = program_error(result)
            got = None if error else normalize_answer(result.value)
            if error is None and same_answer(got, test.answer, self.rel_tol):
                continue
            outcome = f"failed with {error.strip().splitlines()[-1]}" if error else f"answered {got!r}"
            return (f"On a test scene with {test.describe()}, the program {outcome}; "
                    f"the expected answer is {test.answer!r}.")
        return None

    def passed(self, program: str) -> int:
        """How many of the tests the program passes."""
        return sum(self.failure(program, [test]) is None for test in self.tests)
