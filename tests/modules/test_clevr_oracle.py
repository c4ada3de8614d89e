"""CLEVR oracle modules on hand-made scenes: prompt parsing, each module, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

from base_modules.module import ModuleError
from base_modules.oracle.clevr import clevr_oracle_modules
from base_modules.oracle.clevr_camera import CameraFitError, fit_camera
from base_modules.oracle.clevr_synthetic import camera_pose, synthetic_scene
from base_modules.oracle.clevr_vocab import parse_attribute_question, parse_object_prompt
from base_modules.types import Image

ROT, _ = camera_pose()
RIGHT = np.array([ROT[0][0], ROT[0][1]]) / np.linalg.norm(ROT[0][:2])
BEHIND = np.array([ROT[2][0], ROT[2][1]]) / np.linalg.norm(ROT[2][:2])


def obj(color, size, material, shape, right, behind, rotation=0.0):
    """An object placed by its offsets along the camera's right and behind ground directions."""
    x, y = right * RIGHT + behind * BEHIND
    return dict(color=color, size=size, material=material, shape=shape, x=x, y=y,
                rotation=rotation)


SCENE = synthetic_scene([
    obj("red", "large", "metal", "cube", 0.0, 0.0, rotation=0.6),
    obj("blue", "small", "rubber", "sphere", 2.0, -1.5),
    obj("red", "small", "rubber", "cylinder", -2.5, 1.5),
    obj("gray", "large", "metal", "sphere", 1.5, 2.5),
], "tiny.png")
IMAGE = Image("tiny", "tiny.png", 480, 320)


@pytest.fixture
def modules():
    return clevr_oracle_modules({"tiny": SCENE}.get)


def box_of(modules, prompt):
    (box,) = modules.loc(IMAGE, prompt)
    return box


@pytest.mark.parametrize("prompt,expected", [
    ("objects", {}), ("things", {}), ("thing", {}), ("all the objects", {}),
    ("a big shiny ball", {"size": "large", "material": "metal", "shape": "sphere"}),
    ("tiny matte blocks", {"size": "small", "material": "rubber", "shape": "cube"}),
    ("the grey metallic cylinders that are", {"color": "gray", "material": "metal",
                                              "shape": "cylinder"}),
    ("Large RED cube.", {"size": "large", "color": "red", "shape": "cube"}),
    ("spheres", {"shape": "sphere"}),
])
def test_prompt_synonyms_plurals_and_filler(prompt, expected):
    query = parse_object_prompt(prompt)
    assert {k: v for k, v in vars(query).items() if v is not None} == expected


@pytest.mark.parametrize("prompt,word", [("red chair", "chair"), ("glowing cube", "glowing")])
def test_unknown_word_names_word_and_vocabulary(prompt, word):
    with pytest.raises(ModuleError, match=rf"'{word}'.*color: .*red.*shape: .*cube"):
        parse_object_prompt(prompt)


def test_contradictory_or_empty_prompt_rejected():
    with pytest.raises(ModuleError, match="two different colors"):
        parse_object_prompt("red blue cube")
    with pytest.raises(ModuleError, match="empty object prompt"):
        parse_object_prompt("  ")


def test_loc_boxes_are_floats_left_to_right(modules):
    boxes = modules.loc(IMAGE, "objects")
    assert len(boxes) == 4
    assert all(isinstance(v, float) for b in boxes for v in b)
    assert [b[0] for b in boxes] == sorted(b[0] for b in boxes)
    for b in boxes:
        assert 0 <= b[0] < b[2] <= 480 and 0 <= b[1] < b[3] <= 320
    assert len(modules.loc(IMAGE, "red things")) == 2
    assert modules.loc(IMAGE, "yellow cube") == []
    for o in SCENE["objects"]:  # each box contains its object's projected centre
        u, v, _ = o["pixel_coords"]
        (b,) = modules.loc(IMAGE, f"{o['size']} {o['color']} {o['shape']}")
        assert b[0] <= u <= b[2] and b[1] <= v <= b[3]


def test_depth_size_and_same_object(modules):
    cube, ball = box_of(modules, "red cube"), box_of(modules, "blue sphere")
    assert modules.depth(IMAGE, cube) == pytest.approx(SCENE["objects"][0]["pixel_coords"][2])
    assert modules.depth(IMAGE, ball) < modules.depth(IMAGE, cube)  # ball is in front
    w, h = modules.get_2D_object_size(IMAGE, cube)
    assert (w, h) == pytest.approx((cube[2] - cube[0], cube[3] - cube[1]))
    assert modules.same_object(IMAGE, cube, cube) is True
    assert modules.same_object(IMAGE, cube, ball) is False
    shifted = [cube[0] + 2, cube[1] + 1, cube[2] + 2, cube[3] + 1]  # near box still resolves
    assert modules.same_object(IMAGE, cube, shifted) is True


@pytest.mark.parametrize("question,answer", [
    ("What color is this object?", "red"), ("What shape is it?", "cube"),
    ("What material is it made of?", "metal"), ("What is it made of?", "metal"),
    ("What size is it?", "large"), ("How big is it?", "large"),
    ("Is it red?", "yes"), ("Is this a cube?", "yes"), ("Is it shiny?", "yes"),
    ("Is it metal?", "yes"), ("Is it large?", "yes"), ("Is it a ball?", "no"),
    ("Is it a small red cube?", "no"), ("Is the object rubber?", "no"),
])
def test_vqa_attribute_questions(modules, question, answer):
    assert modules.vqa(IMAGE, question, box_of(modules, "red cube")) == answer


@pytest.mark.parametrize("question", [
    "How far is it from the camera?", "What is behind it?", "Is it glowing?",
    "What color and shape is it?",
])
def test_vqa_unanswerable_question_raises(modules, question):
    with pytest.raises(ModuleError, match="attribute questions|several attributes"):
        modules.vqa(IMAGE, question, box_of(modules, "red cube"))


def test_attribute_question_parsing():
    assert parse_attribute_question("Which colour is the object?").attribute == "color"
    assert parse_attribute_question("Is it a big ball?").expected == {"size": "large",
                                                                      "shape": "sphere"}


def test_unmatched_box_raises(modules):
    for call in (lambda b: modules.depth(IMAGE, b), lambda b: modules.vqa(IMAGE, "Is it red?", b),
                 lambda b: modules.get_2D_object_size(IMAGE, b),
                 lambda b: modules.same_object(IMAGE, b, b)):
        with pytest.raises(ModuleError, match="matches no object in image tiny"):
            call([0.0, 0.0, 5.0, 5.0])
    with pytest.raises(ModuleError, match=r"expected a box \[x_min"):
        modules.depth(IMAGE, [1, 2, 3])


def test_missing_scene_names_image(modules):
    other = Image("CLEVR_train_999999", "x.png", 480, 320)
    for call in (lambda: modules.loc(other, "objects"),
                 lambda: modules.depth(other, [0, 0, 10, 10])):
        with pytest.raises(ModuleError, match="no CLEVR scene annotation.*CLEVR_train_999999"):
            call()


def test_camera_needs_three_non_collinear_objects():
    two = synthetic_scene([obj("red", "large", "metal", "cube", 0, 0),
                           obj("blue", "small", "rubber", "sphere", 2, 1)], "two.png")
    with pytest.raises(CameraFitError, match="at least 3"):
        fit_camera(two, 480, 320)
    line = synthetic_scene([obj("red", "large", "metal", "cube", k, k) for k in range(3)])
    line["objects"] = [dict(o, **{"3d_coords": [float(k), float(k), 0.7]})
                       for k, o in enumerate(line["objects"])]
    with pytest.raises(CameraFitError, match="collinear"):
        fit_camera(line, 480, 320)
    modules = clevr_oracle_modules({"two": two}.get)
    with pytest.raises(ModuleError, match="cannot recover the camera"):
        modules.loc(Image("two", "two.png", 480, 320), "objects")


def test_intrinsics_scale_with_image_size():
    """At twice the resolution (pixel_coords doubled) boxes double too."""
    big = synthetic_scene([
        obj("red", "large", "metal", "cube", 0.0, 0.0, rotation=0.6),
        obj("blue", "small", "rubber", "sphere", 2.0, -1.5),
        obj("red", "small", "rubber", "cylinder", -2.5, 1.5),
    ])
    for o in big["objects"]:
        u, v, z = o["pixel_coords"]
        o["pixel_coords"] = [2 * u, 2 * v, z]
    small_mods = clevr_oracle_modules({"s": SCENE}.get)
    big_mods = clevr_oracle_modules({"b": big}.get)
    small_box = small_mods.loc(Image("s", "", 480, 320), "red cube")[0]
    big_box = big_mods.loc(Image("b", "", 960, 640), "red cube")[0]
    assert big_box == pytest.approx([2 * c for c in small_box], abs=1.5)


def test_module_errors_say_how_to_fix_the_call():
    from base_modules.module import ModuleError
    from vadar.runs.prepare import DataSelection

    data = DataSelection(limit=1).prepare()
    m, image = data.modules, data.dataset.image(data.questions[0])
    with pytest.raises(ModuleError, match="describes a relation; loc takes only a noun phrase"):
        m.loc(image, "left of big gray matte")
    with pytest.raises(ModuleError, match=r"got a list of \d+ boxes: .*pass one of them, such as boxes\[0\]"):
        m.depth(image, m.loc(image, "objects"))
    with pytest.raises(ModuleError, match=r"got an empty list: loc found no such object"):
        m.depth(image, [])
    with pytest.raises(ModuleError, match=r"loc\(image, object_prompt\) was called wrongly"):
        m.loc(image, "cube", 3)
