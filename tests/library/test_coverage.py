"""What a helper covers, by its claim or its name, and the coverage of a set of questions."""

from __future__ import annotations

from types import SimpleNamespace

from vadar.library.coverage import Coverage, coverage_of, helper_steps


def covers(name: str, signature: str) -> list[str]:
    return sorted(step.label for step in helper_steps(name, signature))


def helper(name: str, signature: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, signature=signature)


def test_a_helper_covers_what_its_claim_or_its_name_says():
    assert covers("_objects_left_of", "(image: Image, bbox: BBox) -> list[BBox]") == ["relation:left"]
    assert covers("_is_behind", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool") == ["relation:behind"]
    assert covers("_same_shape", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool") == ["same:shape"]
    assert covers("_height_of_object", "(image: Image, bbox: BBox) -> float") == ["measure:height"]
    assert covers("_distance_from_camera", "(image: Image, bbox: BBox) -> float") == ["measure:distance"]
    assert covers("_count_matching", "(image: Image, object_prompt: str) -> int") == ["count:objects"]
    assert covers("_object_material", "(image: Image, bbox: BBox) -> str") == ["attribute:material"]
    assert covers("_compare_counts", "(image: Image, a: str, b: str) -> str") == ["comparison:count", "count:objects"]
    assert covers("_center", "(bbox: BBox) -> list[float]") == []
    assert covers("_object_length", "(views: list[Image], description: str) -> float") == ["measure:length"]
    assert covers("_width_of_object", "(image: Image, bbox: BBox) -> float") == ["measure:width"]


def test_a_length_question_is_covered_by_a_helper_named_for_the_length():
    """A multi-view build's 5 length questions stayed uncovered: only heights were covered by name."""
    questions = ["What is the length of the sofa in metres?"]
    assert coverage_of(questions, []).uncovered == (("measure:length", 1),)
    assert coverage_of(questions, [helper("_object_length", "(views: list[Image], description: str) -> float")]
                       ).covered == 1


def test_coverage_counts_questions_whose_every_step_is_covered():
    questions = ["How many cylinders are there?", "How many things are left of the red sphere?",
                 "What material is the yellow cylinder?", "Are there any rubber cylinders?"]
    library = [helper("_count_matching", "(image: Image, object_prompt: str) -> int"),
               helper("_objects_left_of", "(image: Image, bbox: BBox) -> list[BBox]")]
    coverage = coverage_of(questions, library)
    assert (coverage.questions, coverage.covered, coverage.without_steps, coverage.share) == (4, 3, 1, 0.75)
    assert coverage.uncovered == (("attribute:material", 1),)
    assert Coverage.from_dict(coverage.to_dict()) == coverage
    assert coverage_of([], library).share is None
    assert coverage.line() == "coverage 3 of 4 build questions (75%); not covered: attribute:material (1)"


def test_a_question_asking_the_size_word_needs_no_metric_size():
    """A 100-question CLEVR build asked the Signature agent for a size in metres for "How big is the
    blue thing?" (answer "small") in every batch; two such helpers were proposed and used by no program."""
    from vadar.library.coverage import steps_of
    from vadar.programs.question_form import parse_question

    def labels(question):
        return [step.label for step in steps_of(parse_question(question))]

    assert labels("How big is the blue thing?") == ["attribute:size"]
    assert labels("What is the size of the matte thing that is on the left side of the tiny purple rubber block?") == [
        "relation:left", "attribute:size"]
    assert labels("How tall is the chair, in meters?") == ["measure:height"]


def test_a_question_shape_helper_covers_its_shape_not_the_steps_its_name_words_say():
    """A 100-question CLEVR build reported its plain counts covered once `_count_either` (a union
    count) was admitted: its name says "count"."""
    either = helper("_count_either", "(image: Image, first: list[BBox], second: list[BBox]) -> int")
    questions = ["How many cylinders are there?", "How many things are either red cubes or spheres?"]
    coverage = coverage_of(questions, [either])
    assert (coverage.covered, coverage.uncovered) == (1, (("count:objects", 1),))
    # a step helper the Signature agent named alike, with its own signature, covers by its name
    own = helper("_count_either", "(image: Image, description: str) -> int")
    assert coverage_of(questions[:1], [own]).covered == 1


def test_counts_and_comparisons_a_question_shape_helper_may_yet_carry_are_not_asked_for():
    """Asked for comparing counts, a 100-question CLEVR build's Signature agent proposed four count
    helpers no program called; `_compare_counts`, not yet tried, answers those questions whole."""
    from vadar.library.coverage import uncovered_steps

    left = helper("_objects_left_of", "(image: Image, bbox: BBox) -> list[BBox]")
    questions = ["Are there more cubes than spheres?", "How many cylinders are there?",
                 "Are there more cubes left of the red sphere than cylinders?"]
    asked = uncovered_steps(questions, [left], awaited=["_compare_counts"])
    # the plain count still asks: no question-shape helper answers it
    assert {step.label: n for step, n in asked.items()} == {"count:objects": 1}
    # what a comparison of counts is built on (a relation) is still asked for
    assert {step.label for step in uncovered_steps(questions, [], awaited=["_compare_counts"])} == {
        "count:objects", "relation:left"}
    # once the shape route tried it (no longer awaited), the steps are asked for again
    assert {step.label: n for step, n in uncovered_steps(questions, [left]).items()} == {
        "count:objects": 1, "comparison:count": 2}
    # the build's coverage figure is not changed by it: a waiting helper covers nothing
    assert coverage_of(questions, [left]).covered == 0
