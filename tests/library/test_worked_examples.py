"""Worked examples shown to the Program agent: only right programs that look at the scene."""

from __future__ import annotations

from api_store.evidence import VerifiedProgram
from vadar.library.retrieval import ExampleRetriever, looks_at_the_scene, reads_one_frame

# Recorded from a multi-view build: right on its question (gold "left") without calling anything.
BLIND = '''# Define the image dimensions and focal length
image_width = 1920
focal_length = 0.05  # in metres
bin_distance = 0.05 / focal_length
box_distance = 0.02 / focal_length
stool_distance = bin_distance - box_distance
if stool_distance > 0:
    final_result = "left"
else:
    final_result = "right"
'''
COUNTING = 'bins = loc(image, "bin")\nfinal_result = len(bins)\n'


def program(pid: int, question: str, code: str) -> VerifiedProgram:
    return VerifiedProgram(pid, 1, f"q{pid}", question, "without", code, "x", "x", None, True, ())


def test_a_program_that_calls_nothing_but_builtins_does_not_look_at_the_scene():
    assert not looks_at_the_scene(BLIND)
    assert not looks_at_the_scene("final_result = max(len([1, 2]), abs(-3))")
    assert looks_at_the_scene(COUNTING)
    assert looks_at_the_scene("final_result = _count(image, 'bin')")
    assert not looks_at_the_scene("final_result = (")  # unreadable code is no example either


def test_a_blind_right_program_is_never_shown_as_a_worked_example():
    standing = "If I am standing by the bin and facing the box, is the stool to my left, to my right, or behind me?"
    looking = "If I am standing by the bin and facing the door, is the chair to my left?"
    examples = ExampleRetriever([program(1, standing, BLIND), program(2, looking, COUNTING)], 2, set())
    shown = examples.render("If I am standing by the lamp and facing the mug, is the ball to my left?")
    assert shown is not None
    assert 'bins = loc(image, "bin")' in shown and "stool_distance" not in shown
    assert ExampleRetriever([program(1, standing, BLIND)], 2, set()).render(standing) is None


FARTHER = "How much farther from the camera is the chair than the table?"
DEPTH_DIFFERENCE = '''chair = loc(image, "chair")[0]
table = loc(image, "table")[0]
for b in loc(image, "objects"):
    chair = b
final_result = _depth_difference(image, chair, table)
'''


def test_an_example_call_shows_its_question_and_the_lines_that_set_its_arguments():
    from vadar.programs.api_text import function_stub
    from vadar.library.retrieval import example_calls

    calls = example_calls([program(1, FARTHER, DEPTH_DIFFERENCE)], ["_depth_difference", "_unused"])
    assert set(calls) == {"_depth_difference"}
    # the top-level assignments, in program order; the loop's reassignment is not a one-line setting
    assert calls["_depth_difference"].code == (
        'chair = loc(image, "chair")[0]\ntable = loc(image, "table")[0]\n'
        "final_result = _depth_difference(image, chair, table)")
    stub = function_stub("_depth_difference", "(image: Image, bbox: Box, bbox2: Box) -> float",
                         "depth of bbox minus depth of bbox2.", calls["_depth_difference"])
    assert f'    Example, for "{FARTHER}":\n        chair = loc(image, "chair")[0]\n' in stub
    assert "        final_result = _depth_difference(image, chair, table)\n" in stub


def test_a_wrong_program_lends_no_example_call():
    from vadar.library.retrieval import example_calls

    wrong = VerifiedProgram(1, 1, "q1", FARTHER, "without", DEPTH_DIFFERENCE, "2", "1", None, False, ())
    assert example_calls([wrong], ["_depth_difference"]) == {}


def test_a_right_guess_without_a_helper_is_no_example_and_helper_calls_come_first():
    def recorded(pid, question, code, gold, uses=()):
        return VerifiedProgram(pid, 1, f"q{pid}", question, "with", code, gold, gold, None, True, tuple(uses))

    counting = "How many red cubes are left of the gray sphere?"
    guessed = recorded(1, counting, 'cubes = loc(image, "red cube")\nfinal_result = 0\n', "0")
    assert ExampleRetriever([guessed], 2, set()).render(counting) is None  # right by a guess: not shown
    named = recorded(2, "How many blue things are left of the small cylinder?", COUNTING, "3")
    helper = recorded(3, "How many big balls are left of the red cube?",
                      'cube = loc(image, "red cube")[0]\nfinal_result = _count_related(image, "big ball", "left", cube)\n',
                      "2", ("_count_related",))
    shown = ExampleRetriever([guessed, named, helper], 2, {"_count_related"}).select(counting)
    assert [p.id for p in shown] == [3]  # the shape has a program calling a helper: only those
    assert [p.id for p in ExampleRetriever([guessed, named], 2, set()).select(counting)] == [2]


def test_with_no_right_program_of_its_shape_a_question_a_shape_helper_answers_is_shown_the_catalogue_s():
    counting = "How many red cubes are left of the gray sphere?"
    shown = ExampleRetriever([], 2, {"_count_related"}).render(counting)
    assert shown is not None and "final_result = _count_related(image, " in shown
    assert ExampleRetriever([], 2, {"_find_related"}).render(counting) is None  # a link answers nothing whole


# Recorded from a 30-question multi-view build (docs/results/multiview.md): right because the one
# mug stood in the first frame.
FIRST_FRAME_COUNT = 'mugs = loc(image, "mug")\nfinal_result = len(mugs)\n'
EVERY_FRAME_COUNT = 'mugs = objects_3d(views, "mug")\nfinal_result = len(mugs)\n'


def test_a_first_frame_program_is_no_example_for_a_question_about_several_frames():
    assert reads_one_frame(FIRST_FRAME_COUNT)
    assert reads_one_frame('mugs = loc(views[0], "mug")\nfinal_result = len(mugs)\n')
    assert not reads_one_frame(EVERY_FRAME_COUNT)
    assert not reads_one_frame('final_result = len(loc(views[2], "mug"))')

    mugs = "How many mugs are there in the room?"
    examples = ExampleRetriever([program(1, mugs, FIRST_FRAME_COUNT)], 2, set())
    assert examples.render("How many lamps are there in the room?", views=True) is None  # the fixed example
    assert 'loc(image, "mug")' in examples.render("How many lamps are there in the room?")  # one frame: shown

    both = ExampleRetriever([program(1, mugs, FIRST_FRAME_COUNT), program(2, "How many bins are there in the room?", EVERY_FRAME_COUNT)], 2, set())
    shown = both.render("How many lamps are there in the room?", views=True)
    assert "objects_3d(views" in shown and 'loc(image, "mug")' not in shown


def test_a_first_frame_program_calling_a_helper_is_still_shown_for_several_frames():
    code = 'chair = loc(image, "chair")[0]\ntable = loc(image, "table")[0]\nfinal_result = _distance_between(image, chair, table)\n'
    calling = VerifiedProgram(1, 1, "q1", "How far is the chair from the table?", "with", code, "2.0", "2.0", None,
                              True, ("_distance_between",))
    shown = ExampleRetriever([calling], 2, {"_distance_between"}).render("How far is the lamp from the bin?", views=True)
    assert shown is not None and "_distance_between(image, chair, table)" in shown
