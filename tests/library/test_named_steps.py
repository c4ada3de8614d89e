"""A program's API text names the helpers for the question's own relation and attribute, and no other
shape's question-shape helper by words alone."""

from admitted_library import admitted_library
from vadar.library.retrieval import LibraryRetriever
from vadar.library.shape_helpers import shape_helper

RELATION = "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]"
BEHIND = "How many tiny matte cylinders are behind the tiny red shiny thing?"
EITHER = "How many brown objects are either metal objects or big cylinders?"
# a long docstring sharing the question's words ("many", "tiny", "cylinders", "red", "things") outscores
# the short one of the relation helper the question needs
WORDY = ("How many objects are in `first` or `second`: tiny cylinders or red shiny things, cubes or "
         "spheres; many things counted once.")


library = admitted_library


FUNCTIONS = library(
    ("_objects_behind", RELATION, "Objects behind bbox."),
    ("_objects_left_of", RELATION, "Objects left of bbox."),
    ("_color_of_object", "(image: Image, bbox: BBox) -> str", "The color."),
    ("_same_color", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool", "Whether they share a color."),
    ("_count_either", shape_helper("_count_either").signature, WORDY),
    *[(f"_tiny_thing_{i}", "(image: Image) -> int", "Tiny red shiny things and matte cylinders.") for i in range(4)],
)


def shown(question: str, k: int = 3) -> list[str]:
    return [f.name for f in LibraryRetriever(FUNCTIONS, k).select(question)]


def test_the_helper_of_the_relation_the_question_names_is_always_shown():
    names = shown(BEHIND)
    assert "_objects_behind" in names and "_objects_left_of" not in names


def test_a_question_shape_helper_of_another_shape_is_not_shown_for_its_words():
    assert "_count_either" not in shown(BEHIND, k=6)  # among the six best by words
    assert shown(EITHER)[0] == "_count_either"  # its own shape: always, and first


def test_the_attribute_asked_or_shared_brings_its_reader_or_its_test():
    assert {"_color_of_object", "_objects_behind"} <= set(shown("What color is the cube behind the red ball?"))
    from vadar.library.retrieval import named_steps
    from vadar.programs.question_shape import shape_of

    asked = named_steps(FUNCTIONS, shape_of("What color is the cube behind the red ball?"))
    assert asked == {"_objects_behind", "_color_of_object"}  # nothing shared: no `_same_color`
    shared = named_steps(FUNCTIONS, shape_of("Is there a big object of the same color as the tiny cube?"))
    assert shared == {"_same_color", "_color_of_object"}
    assert named_steps(FUNCTIONS, shape_of(EITHER)) == set()  # no relation, no attribute asked
