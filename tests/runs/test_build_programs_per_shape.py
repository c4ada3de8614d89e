"""A build writes no more programs for a shape family that has enough right ones (`build_programs_per_shape`)."""

import pytest

from api_store.evidence import VerifiedProgram
from vadar.config import VadarConfig
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.programs.question_shape import shape_of
from vadar.runs.distillation import ShapeQuota
from vadar.runs.pipeline import build_api
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

NO_HELPER = dict.fromkeys([Role.GROUP_WRITE, Role.GROUP_FRAME, Role.GROUP_DOCSTRING, Role.DISTILL_NAME], "no code")
PROGRAMS = {  # the first ten questions of the built-in sample
    "How many cylinders are there?": "final_result = len(loc(image, 'cylinder'))",  # right
    "How many large things are there?": "final_result = len(loc(image, 'large things'))",  # same shape
    "Are there any metal cubes?": "final_result = 'no'",  # wrong (the answer is yes)
    "Are there any rubber cylinders?": "final_result = 'no'",  # same shape: written, the first was wrong
    "How many things are left of the red sphere?": "final_result = 5 if loc(image, 'red sphere') else 1",  # right
    "How many things are in front of the cyan sphere?": "final_result = 0",  # its family: another relation
}


@pytest.fixture
def config(tmp_path):
    config = VadarConfig()
    config.library.distill, config.library.propose, config.library.validation = True, False, False
    config.library.build_tries, config.library.scene_checks = 1, 0
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    return config


def _build(config, tmp_path, limit: int) -> list[str]:
    asked: list[str] = []

    def program(messages):
        question = messages[1]["content"].removeprefix("Question: ").split("\n")[0]
        asked.append(question)
        wrong = "final_result = 'teal'" if shape_of(question).answer == "attribute" else "final_result = 0"
        return "```python\n" + PROGRAMS.get(question, wrong) + "\n```"  # wrong, of the kind asked

    with open_session(config, llm=ScriptedLLM([ByRole(NO_HELPER, default=program)] * 60)) as session:
        build_api(session, DataSelection(limit=limit).prepare(), tmp_path / "run", batch_size=limit)
    return asked


def test_a_shape_with_enough_right_programs_gets_no_more_but_a_shape_without_does(config, tmp_path):
    config.library.build_programs_per_shape = 1
    asked = _build(config, tmp_path, 10)
    assert "How many cylinders are there?" in asked
    assert "How many large things are there?" not in asked  # its shape has its one right program
    assert "Are there any rubber cylinders?" in asked  # the other exists question was wrong
    assert "How many things are in front of the cyan sphere?" not in asked  # "left of" answered its family
    assert len(asked) == 8


def test_no_limit_writes_a_program_for_every_build_question(config, tmp_path):
    config.library.build_programs_per_shape = 0
    assert len(_build(config, tmp_path, 10)) == 10


def _program(question: str, *, correct: bool = True, uses: tuple[str, ...] = (), withdrawn: str | None = None,
             question_id: str = "q", code: str = "final_result = len(loc(image, 'thing'))",
             gold: str = "3") -> VerifiedProgram:
    return VerifiedProgram(1, 1, question_id, question, "build", code, gold, gold, None, correct, uses, withdrawn)


def test_the_quota_counts_only_programs_a_worked_example_can_be():
    recorded = [
        _program("How many cubes are there?", question_id="a"),
        _program("How many spheres are there?", question_id="b", uses=("_refused",)),  # a refused candidate's
        _program("How many balls are there?", question_id="c", withdrawn="lost at the gate"),
        _program("How many cones are there?", question_id="d", correct=False),
        _program("How many cubes are there?", question_id="a"),  # the same question twice counts once
        _program("How many disks are there?", question_id="e", code="final_result = 3"),  # never looks
        _program("How many rings are there?", question_id="f", gold="0"),  # a guessable count, no helper
    ]
    quota = ShapeQuota(recorded, {"_count"}, limit=2)
    assert not quota.full("How many red things are there?")
    more = [*recorded, _program("How many rings are there?", question_id="f", gold="0", uses=("_count",))]
    assert ShapeQuota(more, {"_count"}, limit=2).full("How many red things are there?")  # a helper: not a guess
    assert not ShapeQuota(more, {"_count"}, limit=2).full("What color is the cube?")  # another shape
    assert not ShapeQuota(more, {"_count"}, limit=0).full("How many cubes are there?")
