from sandbox_namespace import NAMESPACE
from vadar.programs.helper_calls import build_test_call, parameter_names
from vadar.sandbox import LibraryFunction, execute


def test_boxes_and_image_come_from_modules():
    test = build_test_call("_left_of", "(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]",
                           question="q")
    assert test.call == "_left_of(image, test_boxes[0 if len(test_boxes) > 0 else 0], test_boxes)"
    assert test.code.startswith("test_boxes = loc(image, 'objects')")
    assert test.code.splitlines()[3] == "final_result = " + test.call  # line 4, as errors have always shown it
    assert "watched_arguments = [test_boxes[0 if len(test_boxes) > 0 else 0], test_boxes]" in test.code


def test_two_boxes_get_distinct_objects_and_strings_follow_names():
    test = build_test_call("_same_color", "(image: Image, box_a: BBox, box_b: BBox, attribute: str) -> bool",
                           question="q")
    assert "test_boxes[0 if" in test.call and "test_boxes[1 if" in test.call
    assert test.call.endswith("'color')")


def test_typed_strings_are_not_mistaken_for_boxes_and_defaults_are_left_alone():
    test = build_test_call("_count", "(image: Image, object_prompt: str, limit: int = 3) -> int", question="q")
    assert test.call == "_count(image, 'objects')"
    assert "test_boxes" not in test.code


def test_a_text_parameter_whose_values_the_docstring_lists_gets_the_first_of_them():
    """'objects' for `asked` failed all 16 samples of a CLEVR build's `_attribute_of_same` in vqa."""
    from vadar.library.shape_helpers import shape_helper

    helper = shape_helper("_attribute_of_same")
    test = build_test_call(helper.name, helper.signature, question="q", docstring=helper.docstring)
    assert test.call == ("_attribute_of_same(image, 'color', 'objects', 'color', "
                         "test_boxes[0 if len(test_boxes) > 0 else 0])")  # `shared` by its name
    listed = build_test_call("_pick", "(image: Image, side: str, relation_kind: str) -> int", question="q",
                             docstring="The `side` ('front' or 'behind') and `relation_kind` ('near', 'far').")
    assert listed.call == "_pick(image, 'front', 'near')"  # the docstring's own value before a word in the name
    compare = shape_helper("_compare_counts")
    assert build_test_call(compare.name, compare.signature, question="q",
                           docstring=compare.docstring).call == "_compare_counts(image, test_boxes, test_boxes, 'more')"


def test_untyped_parameters_use_names_and_question_is_passed_through():
    test = build_test_call("_answer", "(image, obj, question)", question="Is it red?")
    assert test.call == "_answer(image, test_boxes[0 if len(test_boxes) > 0 else 0], 'Is it red?')"


LEFT_OF = "(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]"
CHANGES_ITS_CANDIDATES = ('def _left_of(image, reference, candidates):\n    """Left."""\n'
                          '    candidates.remove(reference)\n    return [c for c in candidates if c[2] < reference[0]]\n')


def test_a_test_call_refuses_a_helper_that_changes_an_argument_and_names_it():
    test = build_test_call("_left_of", LEFT_OF, question="q")
    namespace = {**NAMESPACE, "_left_of": LibraryFunction("_left_of", CHANGES_ITS_CANDIDATES)}
    result = execute(test.code, namespace, timeout_s=10, memory_mb=512)
    assert result.error is not None
    last = result.error.splitlines()[-1]
    assert last.startswith("ValueError: _left_of changed its argument `candidates`") and "list(candidates)" in last


def test_a_test_call_of_a_helper_that_leaves_its_arguments_alone_returns_its_value():
    copying = CHANGES_ITS_CANDIDATES.replace("candidates.remove(reference)", "candidates = list(candidates)")
    test = build_test_call("_left_of", LEFT_OF, question="q")
    namespace = {**NAMESPACE, "_left_of": LibraryFunction("_left_of", copying)}
    result = execute(test.code, namespace, timeout_s=10, memory_mb=512)
    assert result.error is None and result.value == []


def test_a_watched_call_names_every_parameter_of_a_signature():
    assert parameter_names("_f", "(image, a, b=2, *, c)") == ["image", "a", "b"]
    assert parameter_names("_f", "(image, a") == []


def test_a_helper_taking_the_frames_is_called_with_views():
    typed = build_test_call("_count_in_room", "(views: list[Image], description: str) -> int", question="How many?")
    assert typed.call.startswith("_count_in_room(views, ")
    untyped = build_test_call("_count_in_room", "(frames, description)", question="How many?")
    assert untyped.call.startswith("_count_in_room(views, ")


def test_a_list_of_text_is_passed_a_list_and_a_chain_one_of_phrases_and_a_relation():
    chain = build_test_call("_objects_along", "(image: Image, chain: list[str]) -> list[BBox]", question="How many?")
    assert chain.call == "_objects_along(image, ['objects', 'left', 'objects'])"
    words = build_test_call("_count_all", "(image: Image, descriptions: list[str]) -> int", question="How many?")
    assert words.call == "_count_all(image, ['objects'])"
