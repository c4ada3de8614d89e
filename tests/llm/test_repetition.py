"""The repetition guard: a looping reply is noticed early; a long but sound one never is."""

from __future__ import annotations

import pytest

from vadar.llm.repetition import RepetitionGuard, find_loop

COUNTER_LOOP = "".join(
    f"objects = [o for o in objects if depth(image, o) < depth(image, objects[{i}])]\n" for i in range(1, 30)
)
BLOCK = (
    "# Calculate the depth of the small rubber ball\n"
    "small_rubber_ball_depth = depth(image, small_rubber_ball)\n"
    "# Calculate the depth of the big green metal block\n"
    "big_green_metal_block_depth = depth(image, big_green_metal_block)\n\n"
)


def test_a_line_that_differs_only_in_a_counter_is_caught_at_its_sixth_time():
    loop = find_loop(COUNTER_LOOP)
    assert loop is not None and loop.period == 1
    assert COUNTER_LOOP[: loop.end].count("\n") == 6  # stopped after 6 of the 29 lines
    assert COUNTER_LOOP[: loop.first_end].count("\n") == 1
    assert loop.line.endswith("objects[1])]")


def test_a_repeated_block_of_several_lines_is_caught():
    text = "boxes = loc(image, 'ball')\n" + BLOCK * 10
    loop = find_loop(text)
    assert loop is not None and loop.period == 4
    assert text[: loop.end].count("# Calculate the depth of the small rubber ball") == 3
    assert text[: loop.first_end] == "boxes = loc(image, 'ball')\n" + BLOCK.rstrip("\n") + "\n"


def test_streaming_in_any_pieces_finds_the_same_place():
    whole = find_loop(COUNTER_LOOP)
    guard = RepetitionGuard()
    for index in range(0, len(COUNTER_LOOP), 7):
        if guard.feed(COUNTER_LOOP[index:index + 7]):
            break
    assert guard.loop == whole


SOUND_PROGRAMS = [
    # unrolled code: two near-identical lines are fine
    "a = depth(image, boxes[0])\nb = depth(image, boxes[1])\nfinal_result = 'yes' if a < b else 'no'\n",
    # nested branches end alike at different depths
    "a = loc(image, 'ball')\nif a:\n    b = loc(image, 'cube')\n    if b:\n        if a == b:\n"
    "            final_result = 'yes'\n        else:\n            final_result = 'no'\n"
    "    else:\n        final_result = 'no'\nelse:\n    final_result = 'no'\n",
    # short lines repeat in any program
    "if a:\n    x = 1\nelse:\n    x = 2\nif b:\n    y = 1\nelse:\n    y = 2\nif c:\n    z = 1\nelse:\n    z = 2\n",
    # stubs share docstring lines but not whole blocks
    "".join(
        f"def _helper_{name}(image: Image, bbox: BBox) -> bool:\n    \"\"\"\n    Args:\n"
        f"        image (Image): The input image to look at.\n        bbox (BBox): the object box.\n"
        f"    Return True if the object is {name}.\n    \"\"\"\n    pass\n\n"
        for name in ("left", "right", "behind", "in_front", "above")
    ),
    # an enumeration of the question's regions (a warehouse multiple-choice question)
    "".join(f"pallet_{i} = region({i})\n" for i in range(5))
    + "".join(f"d{i} = depth(image, pallet_{i})\n" for i in range(5))
    + "final_result = min(range(5), key=lambda i: [d0, d1, d2, d3, d4][i])\n",
]


@pytest.mark.parametrize("text", SOUND_PROGRAMS)
def test_sound_replies_are_read_to_the_end(text: str):
    assert find_loop(text) is None


def test_more_repeats_wait_longer_and_fewer_than_two_are_refused():
    loop = find_loop(COUNTER_LOOP, repeats=5)
    assert loop is not None and COUNTER_LOOP[: loop.end].count("\n") == 10
    same = "x = objects[0]  # the first object\n" * 9
    assert same[: find_loop(same, repeats=5).end].count("\n") == 5  # identical copies: no extra wait
    with pytest.raises(ValueError, match="at least 2"):
        RepetitionGuard(repeats=1)
