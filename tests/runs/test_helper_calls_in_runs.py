"""One answer to "which helpers does this program call", wherever a run asks it."""

from __future__ import annotations

from dataclasses import dataclass

from vadar.library.tracking import helper_uses
from vadar.programs.calls import helpers_called, helpers_reached
from vadar.runs import evaluate

PROGRAM = "objects = _objects_left(image)\nfinal_result = len(objects)\n"


@dataclass
class Result:
    question_id: str
    program: str | None
    score: float


def test_a_longer_name_ending_alike_is_not_a_call():
    assert helpers_called(PROGRAM, ["_left", "_objects_left"]) == {"_objects_left"}


def test_an_evaluation_counts_only_the_helpers_its_programs_call():
    results = [Result("1", PROGRAM, 1.0)]
    assert evaluate._library_functions_used(results, ["_left", "_objects_left"]) == {"_objects_left"}


def test_tracking_counts_calls_not_text():
    results = [Result("1", PROGRAM + "# _left(image) is not called\n", 1.0), Result("2", "final_result = (", 0.0)]
    assert set(helper_uses(results, ["_left", "_objects_left"])) == {"_objects_left"}


def test_helpers_reached_through_the_helpers_a_program_calls():
    dependencies = {"_outer": ("_inner",), "_inner": (), "_other": ()}
    assert helpers_reached("final_result = _outer(image)", dependencies) == {"_outer", "_inner"}
