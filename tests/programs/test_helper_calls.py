from vadar.programs.helper_calls import build_test_call


def test_boxes_and_image_come_from_modules():
    test = build_test_call("_left_of", "(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]",
                           question="q")
    assert test.call == "_left_of(image, test_boxes[0 if len(test_boxes) > 0 else 0], test_boxes)"
    assert test.code.startswith("test_boxes = loc(image, 'objects')")
    assert test.code.rstrip().endswith("final_result = " + test.call)


def test_two_boxes_get_distinct_objects_and_strings_follow_names():
    test = build_test_call("_same_color", "(image: Image, box_a: BBox, box_b: BBox, attribute: str) -> bool",
                           question="q")
    assert "test_boxes[0 if" in test.call and "test_boxes[1 if" in test.call
    assert test.call.endswith("'color')")


def test_typed_strings_are_not_mistaken_for_boxes_and_defaults_are_left_alone():
    test = build_test_call("_count", "(image: Image, object_prompt: str, limit: int = 3) -> int", question="q")
    assert test.call == "_count(image, 'objects')"
    assert "test_boxes" not in test.code


def test_untyped_parameters_use_names_and_question_is_passed_through():
    test = build_test_call("_answer", "(image, obj, question)", question="Is it red?")
    assert test.call == "_answer(image, test_boxes[0 if len(test_boxes) > 0 else 0], 'Is it red?')"
