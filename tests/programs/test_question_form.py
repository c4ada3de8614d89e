"""The question parsed once: answer type, relation, asked dimension, words and named objects."""

from __future__ import annotations

import pytest

from vadar.programs.question_form import parse_question


def test_a_size_question_names_its_dimension_and_its_objects():
    form = parse_question("How tall is the mug on the coffee table?")
    assert (form.answer_type, form.relation, form.asked_dimension) == ("number", None, "height")
    assert [prior.name for prior in form.named_objects] == ["mug", "coffee table"]
    assert {"mug", "coffee", "table", "tall"} <= form.words and "Mug" not in form.words


@pytest.mark.parametrize("question, relation", [
    ("How many times taller is the chair than the mug?", "ratio"),
    ("What is the ratio of the mug's height to the chair's?", "ratio"),
    ("Is the chair taller than the table?", "comparison"),
    ("How far is the mug from the chair?", "distance"),
    ("What is the distance between the mug and the chair?", "distance"),
    ("How tall is the chair?", None),
])
def test_a_stated_relation_makes_it_no_single_size(question, relation):
    form = parse_question(question)
    assert form.relation == relation
    assert (form.asked_dimension is None) == (relation is not None)


def test_another_unit_or_a_count_asks_no_size_in_metres():
    assert parse_question("How tall is the mug in centimeters?").asked_dimension is None
    counted = parse_question("How many cubes are there?")
    assert (counted.answer_type, counted.asked_dimension, counted.named_objects) == ("count", None, ())
