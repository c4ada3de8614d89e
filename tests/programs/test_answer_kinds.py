"""An answer of another kind than its question asks for is sent back, read as the scorer reads answers."""

from __future__ import annotations

import pytest

from vadar.programs.answer_kinds import answer_problem


@pytest.mark.parametrize("question, answer, said", [
    ("How many cubes are there?", "yes", "asks how many"),
    ("How many cubes are there?", [[1.0, 2.0, 3.0, 4.0]], "which is no count"),
    ("How many cubes are there?", 2.5, "no count"),
    ("Is there a red cube?", 3, "asks yes or no"),
    ("Are there any other things of the same color as the ball?", "red", "asks yes or no"),
    ("What size is the cube?", [61.4, 60.2], 'such as `vqa(image, "What size is this object?", box)` returns'),
    ("What color is the cube left of the ball?", "no", "no color"),
    ("The purple cylinder has what size?", 34.99, "no size"),
    ("What material is the cube?", "No metal object found", "The objects the question names are in the image"),
    ("What shape is the thing behind the cube?", "the thing behind the cube is a sphere", "no shape"),
    ("How far is the chair from the camera, in meters?", "3.5 meters", "asks for a number"),
])
def test_an_answer_no_gold_answer_could_be_is_refused_with_the_kind_asked(question, answer, said):
    problem = answer_problem(question, answer)
    assert problem is not None and said in problem


@pytest.mark.parametrize("question, answer", [
    ("How many cubes are there?", 3),
    ("How many cubes are there?", 3.0),
    ("How many cubes are there?", "three"),  # the scorer reads written numbers
    ("Is there a red cube?", "yes"),
    ("Is there a red cube?", 1),  # the scorer reads 1 as yes
    ("Are there any other things of the same color as the ball?", "0"),
    ("What size is the cube?", "large"),
    ("What color is the cube?", "dark brown"),
    ("How far is the chair from the camera, in meters?", 3.5),
    ("Which is closer to the camera, the chair or the table?", [1, 2]),  # a choice: not checked
])
def test_an_answer_of_the_kind_asked_passes(question, answer):
    assert answer_problem(question, answer) is None
