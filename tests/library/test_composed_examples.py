"""Worked examples composed of the library's relation helpers, for spatial questions no helper
answers whole."""

from __future__ import annotations

from types import SimpleNamespace

from api_store.evidence import VerifiedProgram
from base_modules.module import PREDEFINED_MODULES
from vadar.library.composed_examples import composed_example, fallback_example, relations_in_order
from vadar.library.retrieval import ExampleRetriever
from vadar.programs.api_text import render_api
from vadar.programs.call_checks import check_program
from vadar.programs.call_signatures import callable_api
from vadar.programs.helper_rules import MODULE_NAMES, NAMESPACE_NAMES


def helper(name: str, signature: str = "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]"):
    return SimpleNamespace(name=name, signature=signature, docstring="The objects in the relation.", code="")


# As a 20-question CLEVR build admitted them (docs/results/clevr-shapes40/build20/library.json).
RELATIONS = [helper("_objects_behind"), helper("_objects_left_of"), helper("_objects_right_of"),
             helper("_objects_in_front_of", "(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]")]


def test_relations_are_read_in_the_order_the_question_names_them():
    question = "What is the shape of the rubber thing behind the sphere that is left of the big cube in front of it?"
    assert relations_in_order(question) == ["behind", "left", "front"]


def test_a_one_hop_attribute_question_is_shown_the_relation_helper_then_vqa():
    example = composed_example("What material is the big thing behind the red cylinder?", RELATIONS)
    assert example is not None
    assert example.question == "What material is the cube behind the red ball?"
    assert example.code.splitlines() == [
        'ball = loc(image, "red ball")[0]',
        'cubes = _objects_behind(image, ball, loc(image, "cube"))',
        'final_result = vqa(image, "What material is this object?", cubes[0])']


def test_a_chain_starts_from_the_relation_nearest_the_anchor():
    example = composed_example("How many cubes are right of the sphere that is in front of the tiny cylinder?",
                               RELATIONS)
    assert example is not None
    assert example.question == "How many cubes are right of the sphere that is in front of the red ball?"
    lines = example.code.splitlines()
    assert lines[1] == 'spheres = _objects_in_front_of(image, ball, loc(image, "sphere"))'
    assert lines[3] == 'cubes = _objects_right_of(image, sphere, loc(image, "cube"))'
    assert lines[-1] == "final_result = len(cubes)"


def test_every_composed_example_passes_the_program_checks():
    api = callable_api(render_api(RELATIONS + SAME, PREDEFINED_MODULES),
                       {f.name for f in RELATIONS + SAME} | MODULE_NAMES | NAMESPACE_NAMES)
    questions = ["Are there any spheres left of the cube?", "What color is the cube behind the ball?",
                 "How many things are behind the ball that is right of the cylinder that is left of the cube?",
                 "Is the size of the sphere right of the ball the same as the cube behind the cylinder?"]
    for question in questions:
        example = composed_example(question, RELATIONS + SAME)
        assert example is not None and check_program(example.code, api) == []


def test_no_example_where_a_relation_has_no_helper_or_the_question_is_not_spatial():
    only_behind = [helper("_objects_behind")]
    assert composed_example("What color is the cube left of the ball?", only_behind) is None
    assert composed_example("How many other things are the same size as the ball?", RELATIONS) is None
    assert composed_example("Is the cube left of the ball?", RELATIONS) is None  # yes/no about named objects
    # a relation helper that takes no candidates to choose from composes nothing
    assert composed_example("What color is the cube behind the ball?",
                            [helper("_objects_behind", "(image: Image, bbox: BBox) -> list[BBox]")]) is None


def test_a_whole_answer_helper_is_preferred_to_a_composition():
    example = fallback_example("How many cubes are behind the ball?", {"_count_related"}, RELATIONS)
    assert example is not None and "_count_related(" in example.code


def _right(pid: int, question: str, code: str, uses: tuple[str, ...] = ()) -> VerifiedProgram:
    return VerifiedProgram(pid, 1, f"q{pid}", question, "without", code, "3", "3", None, True, uses)


DEPTH_LOOP = ('ref = loc(image, "red cube")[0]\nd = depth(image, ref)\n'
              'final_result = len([b for b in loc(image, "sphere") if depth(image, b) > d])\n')


def test_the_composed_example_comes_before_a_right_program_that_calls_no_helper():
    built = _right(1, "How many spheres are behind the red cube?", DEPTH_LOOP)
    retriever = ExampleRetriever([built], 2, {f.name for f in RELATIONS}, functions=RELATIONS)
    shown = retriever.render("How many green things are behind the small cylinder?")
    assert shown is not None
    assert shown.index("_objects_behind(image, ball") < shown.index("depth(image, b)")


def test_right_programs_calling_a_helper_are_shown_alone():
    calling = ('cube = loc(image, "red cube")[0]\n'
               'final_result = len(_objects_behind(image, cube, loc(image, "sphere")))\n')
    retriever = ExampleRetriever([_right(1, "How many spheres are behind the red cube?", calling, ("_objects_behind",))],
                                 2, {f.name for f in RELATIONS}, functions=RELATIONS)
    shown = retriever.render("How many green things are behind the small cylinder?")
    assert shown is not None and "red ball" not in shown and "_objects_behind(image, cube" in shown


def test_without_the_helpers_records_no_example_is_composed():
    retriever = ExampleRetriever([], 2, {f.name for f in RELATIONS})
    assert retriever.render("How many green things are behind the small cylinder?") is None


def test_an_object_in_two_relations_to_two_references_filters_twice_instead_of_chaining():
    example = composed_example("How many matte cubes are in front of the big rubber cylinder and to the left of the "
                               "purple cube?", RELATIONS)
    assert example is not None
    assert example.question == "How many cubes are both in front of the red ball and left of the cylinder?"
    assert example.code.splitlines()[2:] == ['cubes = _objects_in_front_of(image, ball, loc(image, "cube"))',
                                             "cubes = _objects_left_of(image, cylinder, cubes)",
                                             "final_result = len(cubes)"]


SAME = [helper("_same_color", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool"),
        helper("_same_size", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool")]


def test_two_objects_compared_on_an_attribute_call_its_same_attribute_helper():
    example = composed_example("Is the large rubber ball the same color as the shiny sphere?", RELATIONS + SAME)
    assert example is not None and example.question == "Is the cube the same color as the sphere?"
    assert example.code.splitlines()[-1] == 'final_result = "yes" if _same_color(image, cube, sphere) else "no"'


def test_a_compared_object_found_by_a_relation_is_found_with_its_helper():
    example = composed_example("Is the color of the large cube that is in front of the green object the same as the "
                               "rubber ball left of the cyan matte cylinder?", RELATIONS + SAME)
    assert example is not None
    assert example.question == "Is the cube in front of the ball the same color as the sphere left of the cylinder?"
    assert 'cube = _objects_in_front_of(image, ball, loc(image, "cube"))[0]' in example.code
    assert 'sphere = _objects_left_of(image, cylinder, loc(image, "sphere"))[0]' in example.code


def test_no_comparison_example_without_the_attribute_s_helper():
    assert composed_example("Do the big red thing and the green ball have the same material?", RELATIONS + SAME) is None
    assert composed_example("Is the large rubber ball the same color as the shiny sphere?", RELATIONS) is None


def test_another_object_sharing_an_attribute_is_found_with_the_same_helper_of_that_attribute():
    """"Is there another X of the same size as the Y?" and "...the same material as the Y; what shape is it?"."""
    api = callable_api(render_api(SAME, PREDEFINED_MODULES), {f.name for f in SAME} | MODULE_NAMES | NAMESPACE_NAMES)
    exists = composed_example("Is there any other thing that has the same size as the metallic block?", SAME)
    assert exists is not None and exists.question == "Is there another cube that has the same size as the red ball?"
    assert "_same_size(image, box, ball)" in exists.code and "not same_object(image, box, ball)" in exists.code
    assert exists.code.endswith('final_result = "yes" if len(cubes) > 0 else "no"')
    asked = composed_example("There is another small thing that is the same color as the cylinder; what is it made "
                             "of?", SAME)
    assert asked is not None and asked.question.endswith("the same color as the red ball; what material is it?")
    assert "_same_color(image, box, ball)" in asked.code
    assert asked.code.endswith('final_result = vqa(image, "What material is this object?", cubes[0])')
    for example in (exists, asked):
        assert check_program(example.code, api) == []
    # no `_same_` helper of the shared attribute: no example
    assert composed_example("Is there another cube of the same material as the ball?", SAME) is None


def test_a_helper_answering_the_question_whole_is_shown_called_before_right_programs_that_compose_steps():
    """A chained count: the build's right program filters with a relation helper, the library holds
    `_objects_along`; its catalogue program is shown instead of the build's."""
    composing = ('cube = loc(image, "red cube")[0]\n'
                 'final_result = len(_objects_behind(image, cube, loc(image, "sphere")))\n')
    programs = [_right(1, "How many spheres are behind the red cube that is left of the ball?", composing,
                       ("_objects_behind",))]
    along = helper("_objects_along", "(image: Image, chain: list[str]) -> list[BBox]")
    names = {f.name for f in RELATIONS} | {"_objects_along"}
    shown = ExampleRetriever(programs, 2, names, functions=[*RELATIONS, along]).render(
        "How many green things are behind the small cylinder that is right of the cube?")
    assert shown is not None
    assert "len(_objects_along(image, [" in shown and "_objects_behind(image, cube" not in shown
    # a one-relation question is no chain: the build's program alone, as before
    one = ExampleRetriever(programs, 2, names, functions=[*RELATIONS, along]).render(
        "How many green things are behind the small cylinder?")
    assert one is not None and "_objects_along" not in one


def test_examples_answer_by_the_same_helper_as_the_question_a_chain_or_one_relation():
    """With `_objects_along` admitted, the build's right programs calling it are shown for chains only:
    a chain and one relation are one shape, and one-relation programs copied the chain call."""
    chained = _right(1, "How many spheres are behind the red cube that is left of the ball?",
                     'final_result = len(_objects_along(image, ["spheres", "behind", "red cube", "left", "ball"]))\n',
                     ("_objects_along",))
    single = _right(2, "How many cubes are behind the small cylinder?",
                    'cylinder = loc(image, "small cylinder")[0]\n'
                    'final_result = len(_objects_behind(image, cylinder, loc(image, "cubes")))\n', ("_objects_behind",))
    along = helper("_objects_along", "(image: Image, chain: list[str]) -> list[BBox]")
    retriever = ExampleRetriever([chained, single], 2, {f.name for f in RELATIONS} | {"_objects_along"},
                                 functions=[*RELATIONS, along])
    assert retriever.select("How many green things are behind the large sphere?") == [single]
    assert retriever.select("How many green things are behind the cube right of the sphere?") == [chained]
