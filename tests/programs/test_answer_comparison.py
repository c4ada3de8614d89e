"""The one rule by which answers are compared (votes, unit tests, regions, the report): it never
raises, and a value that cannot be compared is unequal."""

from __future__ import annotations

import pytest

from base_modules.types import Region
from vadar.agents.formalize import type_issue
from vadar.agents.reflect import plausibility_issue
from vadar.agents.voting import decided, plurality
from vadar.programs.answers import as_float, region_number, same_answer
from vadar.report.calls import fmt_value, is_box

HUGE = 10**400


class Unequal:
    """An answer whose comparison raises (as a numpy array's truth value does)."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("the truth value of an array is ambiguous")

    __hash__ = object.__hash__


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("value, expected", [
    (3, 3.0), (2.5, 2.5), (HUGE, None), (-HUGE, None), (True, None), ("3", None), (None, None), ([1], None),
])
def test_as_float_never_raises(value, expected):
    assert as_float(value) == expected


@pytest.mark.parametrize("a, b, same", [
    (HUGE, 1, False), (1, HUGE, False), (HUGE, 1.0, False), (HUGE, HUGE, True), (HUGE, HUGE + 1, False),
    (HUGE, float("inf"), False), (-HUGE, -HUGE, True), (2.0, 2.00001, True), (1, "1", False), (True, 1, False),
    ([HUGE, 0], [HUGE, 0], True), (Unequal(), Unequal(), False), (nested(3000), nested(3000), False),
])
def test_same_answer_never_raises(a, b, same):
    assert same_answer(a, b, 1e-3) is same


@pytest.mark.parametrize("answers, winner", [
    ([HUGE, 1, 1], 1), ([HUGE, HUGE, 1], HUGE), ([1, HUGE, 10**401], 1), ([HUGE, 2.5, "far"], HUGE),
])
def test_a_vote_over_numbers_no_float_holds_has_a_winner(answers, winner):
    working = [True] * len(answers)
    vote = plurality(answers, working, 1e-3)
    assert vote.answer == winner
    assert decided(answers, working, 0, 1e-3)


REGIONS = (Region("<pallet_0>", (0.0, 0.0, 10.0, 10.0)), Region("<pallet_1>", (20.0, 0.0, 30.0, 10.0)))


@pytest.mark.parametrize("value", [[HUGE, 0, 0, 0], [0, 0, float("nan"), 10], (float("inf"), 0, 10, 10),
                                   [-HUGE, HUGE, 0, 0]])
def test_a_box_of_odd_numbers_names_no_region(value):
    assert region_number(value, REGIONS, "int") is value


def test_a_box_names_its_region():
    assert region_number([20, 0, 30, 10.2], REGIONS, "int") == 1


@pytest.mark.parametrize("answer, whole_count", [(HUGE, True), (-HUGE, False)])
def test_the_checks_of_reflect_and_formalize_take_numbers_no_float_holds(answer, whole_count):
    assert "not a finite number" in plausibility_issue(answer)
    assert (type_issue(answer, "count") is None) is whole_count


@pytest.mark.parametrize("value", [[HUGE, 0, 0, 0], [0, float("nan"), 1, 2], [float("inf"), 0, 1, 2]])
def test_the_report_shows_odd_four_number_lists_as_lists(value):
    assert not is_box(value)
    text = fmt_value(value)
    assert text.startswith("[") and ("1" + "0" * 400 in text or "nan" in text or "inf" in text)
    assert is_box([1, 2.5, 3, 4]) and fmt_value([1, 2.5, 3, 4]) == "[1.0, 2.5, 3.0, 4.0]"
