"""Worked examples are retrieved inside the question's shape, never by shared words alone."""

from __future__ import annotations

from api_store.evidence import VerifiedProgram
from vadar.library.retrieval import ExampleRetriever

LOOKS = 'boxes = loc(image, "box")\nfinal_result = len(boxes)\n'
RATIO = "How many times taller is the bin than the orange box?"
COUNT_TALLER = "How many objects are taller than the orange box?"  # shares every word but "times" and "bin"


def program(pid: int, question: str) -> VerifiedProgram:
    return VerifiedProgram(pid, 1, f"q{pid}", question, "without", LOOKS, "x", "x", None, True, ())


def words_alone(shape: object) -> None:
    return None


def shown(questions: list[str], asked: str, k: int = 2, **tiers: object) -> list[str]:
    retriever = ExampleRetriever([program(i, q) for i, q in enumerate(questions)], k, set(), **tiers)
    return [p.question for p in retriever.select(asked)]


def test_a_counting_example_is_never_shown_for_a_ratio_question_when_a_ratio_example_exists():
    pool = [COUNT_TALLER, "How many times taller is the lamp than the mug?", "How many chairs are there?"]
    assert shown(pool, RATIO) == ["How many times taller is the lamp than the mug?"]
    # by words alone the counting loop came first: what programs copied
    assert shown(pool, RATIO, tiers=(words_alone,))[0] == COUNT_TALLER


def test_the_exact_shape_comes_before_its_family_whatever_the_words():
    left = "Is the red chair to the left of the wooden table?"
    behind = "Is the red chair behind the wooden table?"
    other_left = "Is the lamp to the left of the bin?"
    assert shown([behind, other_left], left, k=1) == [other_left]


def test_without_the_exact_shape_the_family_answers_and_without_the_family_nothing():
    asked = "How many cubes are to the left of the red ball?"
    behind = "How many spheres are behind the small cylinder?"
    assert shown([behind, "How many red balls are there?"], asked) == [behind]
    # a count of another kind (no relation), a test of the same relation: another shape, not shown
    others = ["How many red balls are there?", "Is the cube to the left of the red ball?",
              "What color is the ball to the left of the cube?"]
    assert shown(others, asked) == []
    retriever = ExampleRetriever([program(i, q) for i, q in enumerate(others)], 2, set())
    assert retriever.render(asked) is None  # the prompt keeps its fixed example


def test_an_attribute_question_is_not_shown_an_example_reading_another_attribute():
    asked = "What color is the cube behind the red ball?"
    assert shown(["What shape is the cube behind the red ball?"], asked) == []
    assert shown(["What color is the sphere left of the cylinder?"], asked) == [
        "What color is the sphere left of the cylinder?"]
