"""The catalogue of question-shape helpers: which question shapes each answers, and the order the
Program agent reads the library in."""

from __future__ import annotations

from admitted_library import admitted_library
from api_store import ApiStore
from vadar.library.coverage import coverage_of
from vadar.library.retrieval import LibraryRetriever
from vadar.library.shape_helpers import (CATALOGUE, answered_by, catalogue_example, helpers_for, shape_helper,
                                         shape_helpers_first, supported)

COUNT_RELATED = "There is a small blue metallic cylinder; how many purple rubber things are left of it?"
COLOR_RELATED = ("There is a big rubber cube to the left of the big metallic object that is behind the matte "
                 "thing; what color is it?")
SAME_SIZE = "Do the blue metallic cube and the yellow matte object have the same size?"
MORE = "Are there more brown cylinders than purple cubes?"
EITHER = "How many things are either big gray matte cylinders or small cyan matte things?"

COUNT = " Call it `related`: those boxes already match `description`, so the answer is how many there are, `len(related)`."
ATTRIBUTE = " Call it `related`: those boxes already match `description`, so the object is the first of them, `related[0]`: return `vqa(image, f'What {attribute} is this object?', related[0])`."


def names(question):
    return [h.name for h in helpers_for(question)]


def test_each_common_clevr_shape_has_a_helper_whose_one_call_answers_it():
    assert names(COUNT_RELATED) == ["_find_related", "_count_related"]
    assert names(COLOR_RELATED) == ["_find_related", "_objects_along", "_attribute_of_related", "_attribute_of"]
    assert names(SAME_SIZE) == ["_same_attribute"]
    assert names(MORE) == ["_compare_counts"]
    assert names(EITHER) == ["_count_either"]
    # a link of a chain serves the shape but does not answer it alone
    assert answered_by(COUNT_RELATED, ["_find_related"]) is None
    assert answered_by(COUNT_RELATED, ["_find_related", "_count_related"]) == "_count_related"
    assert answered_by("What color is the small cylinder?", ["_attribute_of"]) == "_attribute_of"
    assert answered_by(COLOR_RELATED, ["_attribute_of"]) is None


def test_catalogue_names_are_unique_and_claim_nothing_ground_truth_checks():
    from vadar.library.claims import named_claim
    assert len({h.name for h in CATALOGUE}) == len(CATALOGUE)
    assert all(named_claim(h.name, h.signature) is None for h in CATALOGUE)  # judged by outcome only
    assert shape_helper("_count_related").signature.endswith("-> int") and shape_helper("_other") is None


def test_helpers_answering_a_shape_whole_come_most_supported_first_and_a_link_never():
    ranked = supported([MORE, COUNT_RELATED, COUNT_RELATED])
    assert [(h.name, positions) for h, positions in ranked] == [("_count_related", [1, 2]), ("_compare_counts", [0])]
    assert supported([COLOR_RELATED]) == [(shape_helper("_objects_along"), [0]),  # a chain of two relations
                                          (shape_helper("_attribute_of_related"), [0])]  # `_attribute_of` is a link there


def test_a_question_a_library_helper_answers_whole_gets_the_catalogue_s_worked_program():
    from vadar.library.shape_helpers import catalogue_example
    example = catalogue_example(COUNT_RELATED, ["_find_related", "_count_related"])
    assert example is not None and "final_result = _count_related(image, " in example.code
    assert catalogue_example(COUNT_RELATED, ["_find_related"]) is None  # a link alone answers nothing whole


library = admitted_library


def test_the_retriever_always_shows_the_question_s_shape_helper_and_shows_it_first():
    others = [(f"_purple_thing_{i}", "(image: Image) -> int", "Purple rubber things left of a cylinder.")
              for i in range(5)]
    functions = library(*others, ("_count_related", shape_helper("_count_related").signature, "Counts."))
    chosen = LibraryRetriever(functions, k=2).select(COUNT_RELATED)
    assert chosen[0].name == "_count_related" and len(chosen) == 3
    assert [f.name for f in LibraryRetriever(functions, k=0).select(COUNT_RELATED)][0] == "_count_related"


def test_a_question_a_shape_helper_answers_is_covered():
    functions = library(("_compare_counts", shape_helper("_compare_counts").signature, "Compares."))
    assert coverage_of([MORE, SAME_SIZE], []).covered == 0
    coverage = coverage_of([MORE, SAME_SIZE], functions)
    assert coverage.covered == 1 and dict(coverage.uncovered) == {"same:size": 1}


def test_a_shape_helper_is_asked_to_build_on_the_step_helpers_the_library_admitted():
    from vadar.library.shape_proposal import built_on
    functions = library(("_objects_left_of", "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]",
                         "Boxes left of bbox."),
                        ("_same_color", "(image: Image, a: BBox, b: BBox) -> bool", "Same color."),
                        ("_object_material", "(image: Image, bbox: BBox) -> str", "The material."))
    assert built_on(shape_helper("_count_related"), functions) == (
        " Build it on the library's helpers, which are checked right: `_objects_left_of(image, bbox, candidates)` "
        "(relation left); call them instead of comparing boxes or depths yourself. Pick the one `relation` names "
        "with `{'left': _objects_left_of}.get(relation)`, called as `picked(image, reference, loc(image, description))`; "
        "for 'right', 'front', 'behind', which none of them does, do it as said above." + COUNT)
    assert "`_object_material(image, bbox)` (attribute material), `_same_color(image, a, b)` (same color);" in (
        built_on(shape_helper("_count_same_attribute"), functions))
    assert built_on(shape_helper("_count_either"), functions) == ""
    # an attribute read is built on neither the readers (one `vqa` each: the hint does it) nor the comparisons
    assert built_on(shape_helper("_attribute_of"), functions) == ""


def test_a_shape_helper_choosing_among_step_helpers_by_a_parameter_is_shown_the_dict_that_picks_one():
    from vadar.library.shape_proposal import built_on
    relation = "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]"
    functions = library(("_objects_left_of", relation, "Left."), ("_objects_behind", relation, "Behind."),
                        ("_same_color", "(image: Image, a: BBox, b: BBox) -> bool", "Same color."),
                        ("_same_size", "(image: Image, a: BBox, b: BBox) -> bool", "Same size."))
    assert built_on(shape_helper("_attribute_of_related"), functions).endswith(
        " Pick the one `relation` names with `{'behind': _objects_behind, 'left': _objects_left_of}.get(relation)`, "
        "called as `picked(image, reference, loc(image, description))`; for 'right', 'front', which none of them "
        "does, do it as said above." + ATTRIBUTE)
    assert built_on(shape_helper("_attribute_of_same"), functions).endswith(
        " Pick the one `shared` names with `{'color': _same_color, 'size': _same_size}.get(shared)`; for 'shape', "
        "'material', which none of them does, do it as said above.")
    four = library(*((f"_objects_{word}", relation, "A relation.") for word in ("left_of", "right_of", "in_front_of",
                                                                                "behind")))
    # the picked helper's arguments come from the shape helper's: the candidates are what `description` matches
    assert built_on(shape_helper("_count_related"), four).endswith(
        " Pick the one `relation` names with a dict: `{'behind': _objects_behind, 'front': _objects_in_front_of, "
        "'left': _objects_left_of, 'right': _objects_right_of}[relation](image, reference, loc(image, description))`."
        + COUNT)
    # how the related boxes answer it follows from what it returns
    assert built_on(shape_helper("_exists_related"), four).endswith("so the answer is whether there is any, "
                                                                     "`len(related) > 0`.")
    assert built_on(shape_helper("_find_related"), four).endswith("so the object is the first of them, `related[0]`.")
    assert "Pick the one" not in built_on(shape_helper("_count_either"), four)  # nothing to choose among
    # no `description` to find candidates with (a yes/no of two boxes), or relation helpers without candidates
    assert built_on(shape_helper("_is_related"), four).endswith("'right': _objects_right_of}[relation]`.")
    bare = library(*((f"_objects_{word}", "(image: Image, bbox: BBox) -> list[BBox]", "A relation.")
                     for word in ("left_of", "right_of", "in_front_of", "behind")))
    # relation helpers of the reference alone: called on it, their objects kept where `description` matches
    assert built_on(shape_helper("_count_related"), bare).endswith(
        "'right': _objects_right_of}[relation](image, reference)`. It returns every object in that relation: keep "
        "those `description` matches, `[b for b in related if any(same_object(image, b, m) for m in "
        "loc(image, description))]`.")
    mixed = library(("_objects_left_of", relation, "Left."), ("_objects_behind", "(image: Image, bbox: BBox) -> "
                                                                                 "list[BBox]", "Behind."))
    assert built_on(shape_helper("_count_related"), mixed).endswith("which none of them does, do it as said above.")
    assert "Call it `related`" not in built_on(shape_helper("_count_related"), bare)  # those boxes match anything


def test_a_shape_helper_built_on_step_helpers_is_not_shown_how_the_modules_do_those_steps():
    from vadar.library.shape_helpers import ASKED_HOW, ATTRIBUTE_HOW, RELATION_HOW, proposed_by_shape_route
    from vadar.library.shape_proposal import proposed_docstring
    helper = shape_helper("_attribute_of_related")
    relations = library(("_objects_left_of", "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]",
                         "Boxes left of bbox."))
    # one relation of four: the hint stays for the other three; all four: it goes
    assert RELATION_HOW in proposed_docstring(helper, relations)
    relation = "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]"
    relations = library(*((f"_objects_{word}", relation, "A relation.") for word in ("left_of", "right_of",
                                                                                    "in_front_of", "behind")))
    docstring = proposed_docstring(helper, relations)
    assert RELATION_HOW not in docstring and ATTRIBUTE_HOW in docstring  # no attribute helper: its hint stays
    assert docstring.endswith("'right': _objects_right_of}[relation](image, reference, loc(image, description))`."
                              + ATTRIBUTE)
    assert proposed_docstring(helper, []) == helper.docstring
    # helpers comparing two objects' attributes read none: with only those, the asked attribute keeps its hint
    same = library(("_same_color", "(image: Image, a: BBox, b: BBox) -> bool", "Same color."))
    assert ASKED_HOW in proposed_docstring(shape_helper("_attribute_of_same"), same)
    assert "f'What {asked} is this object?'" in ASKED_HOW
    assert proposed_by_shape_route(helper.name, docstring) and proposed_by_shape_route(helper.name, helper.docstring)


def test_every_catalogue_example_call_fits_its_helper_s_signature_and_strings_for_lists_are_caught():
    from types import SimpleNamespace

    from base_modules.module import PREDEFINED_MODULES
    from vadar.programs.api_text import render_api
    from vadar.programs.call_checks import check_program
    from vadar.programs.call_signatures import callable_api
    from vadar.programs.helper_rules import MODULE_NAMES, NAMESPACE_NAMES
    from vadar.library.shape_helpers import catalogue_calls

    functions = [SimpleNamespace(name=h.name, signature=h.signature, docstring=h.docstring, code="") for h in CATALOGUE]
    api = callable_api(render_api(functions, PREDEFINED_MODULES), {h.name for h in CATALOGUE} | MODULE_NAMES | NAMESPACE_NAMES)
    for name, call in catalogue_calls([h.name for h in CATALOGUE]).items():
        problems = check_program(call.code, api)
        if "final_result" not in call.code:  # a link's call: a step of a program, its result read later
            problems = [p for p in problems if p.check != "unused_results"]
        assert problems == [], name
    # either side of an either/or count may name a relation, so each is a list of boxes, not a phrase
    [problem] = check_program('final_result = _count_either(image, loc(image, "cubes"), "small spheres")', api)
    assert "_count_either" in problem.message and "second" in problem.message


def test_a_measure_shape_helper_builds_on_the_admitted_height_helper_never_on_another_shape_helper():
    from vadar.library.shape_helpers import HEIGHT_HOW
    from vadar.library.shape_proposal import built_on, proposed_docstring
    ratio = "How many times taller is the lamp than the mug?"
    functions = library(("_height_of_object", "(image: Image, bbox: BBox) -> float", "Height in metres."),
                        ("_height_ratio", shape_helper("_height_ratio").signature, "Ratio."))
    assert built_on(shape_helper("_stack_count"), functions) == (
        " Build it on the library's helpers, which are checked right: `_height_of_object(image, bbox)` "
        "(measure height); call them instead of comparing boxes or depths yourself.")
    assert HEIGHT_HOW not in proposed_docstring(shape_helper("_stack_count"), functions)
    assert HEIGHT_HOW in proposed_docstring(shape_helper("_stack_count"), functions[1:])  # no step: the hint stays
    assert built_on(shape_helper("_depth_difference"), functions) == ""  # it composes no height
    assert answered_by(ratio, ["_height_ratio"]) == "_height_ratio"
    assert coverage_of([ratio], functions).covered == 1 and coverage_of([ratio], functions[:1]).covered == 0


def test_a_shape_helper_reading_an_attribute_is_offered_no_reader_and_keeps_the_hint():
    """A CLEVR build offered `_attribute_of_related` only `_size_of_object` and dropped the hint: all 16
    samples read every attribute with it and never read `attribute`. Offered it with the hint, the next
    build's 16 samples branched on `attribute` and never called the relation helpers. A reader is one
    `vqa` call, which the hint does for every value; the relation helpers stay offered."""
    from vadar.library.shape_helpers import ATTRIBUTE_HOW
    from vadar.library.shape_proposal import proposed_docstring
    reader = "(image: Image, bbox: BBox) -> str"
    relations = [(f"_objects_{r}", "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]", "Boxes.")
                 for r in ("left_of", "right_of", "behind", "in_front_of")]
    for readers in (["size"], ["color", "shape", "material", "size"]):
        functions = library(*((f"_{a}_of_object", reader, f"The {a}.") for a in readers), *relations)
        docstring = proposed_docstring(shape_helper("_attribute_of_related"), functions)
        assert ATTRIBUTE_HOW in docstring and "_of_object" not in docstring
        assert docstring.endswith("[relation](image, reference, loc(image, description))`." + ATTRIBUTE)


def test_a_comparing_helper_picks_among_the_readers_when_they_cover_more_values_than_the_comparisons():
    """A build offered `_count_same_attribute` four readers and only `_same_size`: the dict names the readers."""
    from vadar.library.shape_proposal import built_on
    reader = "(image: Image, bbox: BBox) -> str"
    functions = library(*((f"_{a}_of_object", reader, f"The {a}.") for a in ("color", "shape", "material", "size")),
                        ("_same_size", "(image: Image, a: BBox, b: BBox) -> bool", "Same size."))
    # the picked helper gets a name and the comparison is written out: shown the dict alone, samples called
    # the helper being written to compare two objects
    assert built_on(shape_helper("_count_same_attribute"), functions).endswith(
        " Pick the one `attribute` names with a dict, `read = {'color': _color_of_object, 'material': "
        "_material_of_object, 'shape': _shape_of_object, 'size': _size_of_object}[attribute]`, then test each "
        "other object of `loc(image, description)`, `not same_object(image, other, reference)`, with "
        "`read(image, other) == read(image, reference)`.")
    assert built_on(shape_helper("_same_attribute"), functions).endswith(
        "[attribute]`, then compare `read(image, first) == read(image, second)`.")
    same = library(*((f"_same_{a}", "(image: Image, a: BBox, b: BBox) -> bool", f"Same {a}.")
                     for a in ("color", "shape", "material", "size")))
    assert built_on(shape_helper("_exists_same_attribute"), same).endswith(
        " Pick the one `attribute` names with a dict, `same = {'color': _same_color, 'material': _same_material, "
        "'shape': _same_shape, 'size': _same_size}[attribute]`, then test each other object of `loc(image, "
        "description)`, `not same_object(image, other, reference)`, with `same(image, other, reference)`.")


def test_a_helper_reading_the_attribute_of_a_match_is_told_which_object_and_reads_it_with_vqa():
    """Told to "test each other object", a CLEVR build's `_attribute_of_same` samples copied a loop over
    `loc` and never assigned the picked helper; offered the readers too, they returned a reader's dict."""
    from vadar.library.shape_helpers import ASKED_HOW
    from vadar.library.shape_proposal import proposed_docstring
    reader = "(image: Image, bbox: BBox) -> str"
    functions = library(*((f"_{a}_of_object", reader, f"The {a}.") for a in ("color", "shape", "material", "size")),
                        *((f"_same_{a}", "(image: Image, a: BBox, b: BBox) -> bool", f"Same {a}.")
                          for a in ("color", "shape", "material", "size")))
    docstring = proposed_docstring(shape_helper("_attribute_of_same"), functions)
    assert "_of_object" not in docstring and ASKED_HOW in docstring  # one `vqa` call reads any attribute
    assert docstring.endswith(
        "[shared]`, then the object is the first `other` of `loc(image, description)` with `not same_object(image, "
        "other, reference) and same(image, other, reference)`: return `vqa(image, f'What {asked} is this object?', "
        "other)`.")
    # a helper counting the matches is still told to test each of them, the reference told by same_object
    assert proposed_docstring(shape_helper("_count_same_attribute"), functions).endswith(
        "then test each other object of `loc(image, description)`, `not same_object(image, other, reference)`, "
        "with `same(image, other, reference)`.")


def test_the_either_helper_carries_a_description_before_either_to_both_sides():
    # CLEVR asks "How many large things are either ...": programs that dropped "large" were wrong
    helper = shape_helper("_count_either")
    assert "belongs to both sides" in helper.what
    example = catalogue_example("How many large objects are either blue cubes or spheres?", ["_count_either"])
    assert example.question.startswith("How many large things are either")
    assert 'loc(image, "large red cubes")' in example.code and 'loc(image, "large spheres")' in example.code


def test_a_question_a_shape_helper_answers_is_not_shown_the_shape_helpers_of_other_shapes():
    from types import SimpleNamespace

    from vadar.library.shape_helpers import shape_helpers_first

    library = [SimpleNamespace(name="_objects_left_of", signature="(image: Image, bbox: BBox) -> list[BBox]"),
               *(SimpleNamespace(name=n, signature=shape_helper(n).signature) for n in ("_count_either", "_compare_counts"))]
    shown = [f.name for f in shape_helpers_first(library, MORE)]
    assert shown == ["_compare_counts", "_objects_left_of"]  # _count_either drew programs away from it
    # a step helper the Signature agent named alike, with its own signature, stays
    own = SimpleNamespace(name="_count_either", signature="(image: Image, description: str) -> int")
    assert [f.name for f in shape_helpers_first([library[2], own], MORE)] == ["_compare_counts", "_count_either"]
    # nothing answers the question whole: every helper stays, its own shape's first
    assert [f.name for f in shape_helpers_first(library[:2], MORE)] == ["_objects_left_of", "_count_either"]
    assert [f.name for f in shape_helpers_first(library, EITHER)] == ["_count_either", "_objects_left_of"]


def test_an_exists_helper_is_built_on_its_admitted_count_twin():
    """Offered the `_same_` helpers and their dict, a build's `_exists_same_attribute` samples skipped
    the objects sharing the attribute; the one admitted elsewhere was `_count_same_attribute(...) > 0`."""
    from vadar.library.shape_helpers import ATTRIBUTE_HOW
    from vadar.library.shape_proposal import proposed_docstring
    count = shape_helper("_count_same_attribute")
    same = ("_same_size", "(image: Image, a: BBox, b: BBox) -> bool", "Same size.")
    docstring = proposed_docstring(shape_helper("_exists_same_attribute"),
                                   library((count.name, count.signature, "Count."), same))
    assert docstring.endswith(" Build it on the library's `_count_same_attribute`, which is checked right: it is "
                              "`_count_same_attribute(image, attribute, description, reference) > 0`.")
    assert ATTRIBUTE_HOW not in docstring and "_same_size" not in docstring
    # without the twin admitted (or a helper of its name with another signature) the step helpers are offered
    for functions in (library(same), library((count.name, "(image: Image, description: str) -> int", "Count."), same)):
        assert "`_same_size(image, a, b)` (same size)" in proposed_docstring(shape_helper("_exists_same_attribute"),
                                                                            functions)


CHAIN_COUNT = ("How many tiny gray objects are left of the tiny green matte object that is behind the tiny matte "
               "cube that is behind the gray object?")
CHAIN_EXISTS = "There is a object behind the small blue cube; are there any green metallic objects left of it?"
BOTH = "What size is the object that is both on the left side of the big purple object and in front of the gray metal object?"


def test_the_chain_helper_answers_only_a_chain_of_two_relations_or_more_and_first():
    along = ["_objects_along", "_count_related", "_exists_related", "_attribute_of_related"]
    assert answered_by(CHAIN_COUNT, along) == "_objects_along"
    assert answered_by(CHAIN_EXISTS, along) == "_objects_along"
    assert answered_by(COLOR_RELATED, along) == "_objects_along"
    # one relation, or two relations of one object ("both"), is no chain: the one-relation helpers answer
    assert answered_by(COUNT_RELATED, along) == "_count_related"
    assert answered_by(BOTH, along) == "_attribute_of_related"
    assert answered_by(BOTH, ["_objects_along"]) is None


def test_the_chain_helper_s_worked_example_wraps_its_call_as_the_question_asks():
    names_ = ["_objects_along"]
    assert catalogue_example(CHAIN_COUNT, names_).code.startswith("final_result = len(_objects_along(image, [")
    assert 'final_result = "yes" if things else "no"' in catalogue_example(CHAIN_EXISTS, names_).code
    example = catalogue_example(COLOR_RELATED, names_)
    assert "_objects_along(image, [" in example.code and "vqa(image, " in example.code


def test_the_hand_written_chain_helper_walks_the_chain_as_its_docstring_says():
    """The hand version (the headroom) on a scene of four boxes: relations by box centre and depth."""
    from pathlib import Path
    from vadar.sandbox import execute
    source = (Path(__file__).parents[2] / "benchmarks" / "hand_library" / "clevr_chain.py").read_text()
    boxes = {"red cylinder": [[100, 0, 120, 20]], "sphere": [[60, 0, 80, 20], [140, 0, 160, 20]],
             "cubes": [[10, 0, 30, 20], [200, 0, 220, 20], [40, 0, 50, 20]]}
    depths = {100: 5.0, 60: 7.0, 140: 3.0, 10: 9.0, 200: 9.0, 40: 2.0}
    namespace = {"image": "img", "Image": str, "BBox": list, "loc": lambda image, phrase: boxes.get(phrase, []),
                 "depth": lambda image, box: depths[box[0]], "same_object": lambda image, a, b: a == b}
    code = source + '\nfinal_result = _objects_along(image, ["cubes", "left", "sphere", "behind", "red cylinder"])'
    result = execute(code, namespace, timeout_s=10, memory_mb=512)
    assert result.error is None, result.error
    # the sphere behind the cylinder is the one at x 60; the cubes left of it are at x 10 and 40
    assert result.value == [[10, 0, 30, 20], [40, 0, 50, 20]]
    code = source + '\nfinal_result = _objects_along(image, ["cubes", "front", "sphere", "left", "red cylinder"])'
    assert execute(code, namespace, timeout_s=10, memory_mb=512).value == [[40, 0, 50, 20]]


def test_where_the_chain_helper_answers_the_one_relation_step_helpers_are_left_out_of_the_api():
    from types import SimpleNamespace
    def f(name, signature="(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]"):
        return SimpleNamespace(name=name, signature=signature)
    along = f("_objects_along", shape_helper("_objects_along").signature)
    library = [f("_objects_left_of"), f("_objects_behind"), f("_color_of_object", "(image: Image, bbox: BBox) -> str"),
               along]
    assert [x.name for x in shape_helpers_first(library, CHAIN_COUNT)] == ["_objects_along", "_color_of_object"]
    # one relation is no chain: the library as it is, in its order
    assert [x.name for x in shape_helpers_first(library, COUNT_RELATED)] == [
        "_objects_left_of", "_objects_behind", "_color_of_object", "_objects_along"]


def test_programs_read_a_chain_helper_without_the_walk_it_was_proposed_with(tmp_path):
    """The walk in the docstring is for the implementer: the API text programs read stops before it,
    for the catalogue's inline walk and for the walk on the library's relation helpers."""
    from vadar.library.shape_helpers import CHAIN_WALK, WALK, for_programs
    from vadar.library.shape_proposal import chain_walk
    along = shape_helper("_objects_along")
    with ApiStore(tmp_path / "walk.sqlite") as store:
        for name in ("_objects_left_of", "_objects_right_of", "_objects_in_front_of", "_objects_behind"):
            store.propose(name, "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]", "One relation.")
            store.implement(name, f"def {name}(image, bbox, candidates):\n    return candidates\n")
            store.mark_admitted(name)
        walks = [CHAIN_WALK, chain_walk(store.library())]
        assert walks[1] is not None and all(walk.startswith(WALK) for walk in walks)
        for version, walk in enumerate(walks):
            store.propose(f"_objects_along{version}", along.signature, along.docstring.replace(CHAIN_WALK, walk))
            stored = store.implement(f"_objects_along{version}", "def f(image, chain):\n    return []\n")
            assert "found = loc(image, chain[-1])[0]" in stored.docstring
            shown = for_programs(stored)
            assert shown.docstring == along.what.strip() and "found = " not in shown.docstring
            assert shown.code == stored.code and shown.name == stored.name
        # shape_helpers_first shows each function so; any other docstring as stored
        relation = store.current("_objects_left_of")
        assert for_programs(relation) is relation
        assert [f.docstring for f in shape_helpers_first([stored, relation], CHAIN_COUNT)] == [
            along.what.strip(), "One relation."]
