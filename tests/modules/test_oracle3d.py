"""The 3D-annotation oracle on a hand-made scene (no rendering needed)."""

import pytest

from base_modules.module import ModuleError
from base_modules.oracle.annotations3d import annotations3d_oracle_modules, is_annotations3d_scene
from base_modules.oracle.annotations3d_vocab import plurals
from base_modules.types import Image

SCENE = {
    "vocabulary": {"category": {"bin": ["trash can"], "table": ["desk"], "lamp": []},
                   "material": {"wood": ["wooden"], "metal": ["metallic"]}},
    "objects": [
        {"category_name": "chair", "color": "red", "material": "wood",
         "bbox2D_proj": [10, 10, 50, 90], "center_cam": [0.1, 0.2, 3.5]},
        {"category_name": "chair", "color": "blue", "material": "metal",
         "bbox2D_proj": [200, 20, 240, 100], "depth": 5.25},
        {"category_name": "bin", "color": "red", "material": "metal",
         "bbox2D_proj": [100, 50, 130, 95], "depth": 4.0},
    ],
}
IMAGE = Image("s0", "s0.png", 320, 240)


@pytest.fixture
def m():
    return annotations3d_oracle_modules(lambda image_id: SCENE if image_id == "s0" else None)


def test_loc_resolves_classes_plurals_synonyms_attributes_and_everything(m):
    assert m.loc(IMAGE, "chairs") == [[10, 10, 50, 90], [200, 20, 240, 100]]
    assert m.loc(IMAGE, "the red wooden chair") == [[10, 10, 50, 90]]
    assert m.loc(IMAGE, "trash cans") == m.loc(IMAGE, "bin") == [[100, 50, 130, 95]]
    assert m.loc(IMAGE, "red objects") == [[10, 10, 50, 90], [100, 50, 130, 95]]
    assert len(m.loc(IMAGE, "things")) == 3
    assert m.loc(IMAGE, "lamp") == [] and m.loc(IMAGE, "desk") == []
    assert m.loc(IMAGE, "metallic things") == [[100, 50, 130, 95], [200, 20, 240, 100]]


def test_loc_rejects_unknown_words_and_lists_the_vocabulary(m):
    with pytest.raises(ModuleError, match=r"'sofa'.*category: .*chair"):
        m.loc(IMAGE, "sofa")
    with pytest.raises(ModuleError, match="two different colors"):
        m.loc(IMAGE, "red blue chair")
    with pytest.raises(ModuleError, match="noun phrase"):
        m.loc(IMAGE, "")


def test_depth_is_the_camera_z_of_the_3d_centre(m):
    assert m.depth(IMAGE, [10, 10, 50, 90]) == 3.5
    assert m.depth(IMAGE, [201, 21, 240, 100]) == 5.25
    with pytest.raises(ModuleError, match="matches no object"):
        m.depth(IMAGE, [0, 200, 5, 210])


def test_vqa_answers_attributes_and_yes_no_questions(m):
    box = [100, 50, 130, 95]
    assert m.vqa(IMAGE, "What color is this object?", box) == "red"
    assert m.vqa(IMAGE, "What material is it made of?", box) == "metal"
    assert m.vqa(IMAGE, "What is this object?", box) == "bin"
    assert m.vqa(IMAGE, "What kind of object is this?", box) == "bin"
    assert m.vqa(IMAGE, "Is it a trash can?", box) == "yes"
    assert m.vqa(IMAGE, "Is it wooden?", box) == "no"
    with pytest.raises(ModuleError, match="only questions about the object"):
        m.vqa(IMAGE, "How heavy is it?", box)


def test_same_object_size_and_missing_scene(m):
    assert m.same_object(IMAGE, [10, 10, 50, 90], [11, 11, 50, 90])
    assert not m.same_object(IMAGE, [10, 10, 50, 90], [100, 50, 130, 95])
    assert m.get_2D_object_size(IMAGE, [100, 50, 130, 95]) == (30.0, 45.0)
    with pytest.raises(ModuleError, match="no 3D annotation"):
        m.loc(Image("other", "o.png", 10, 10), "chair")


def test_plurals_and_scene_detection():
    assert plurals("box") == {"boxes"} and plurals("trash can") == {"trash cans"}
    assert plurals("shelf") == {"shelfs", "shelves"}
    assert is_annotations3d_scene(SCENE)
    assert not is_annotations3d_scene({"objects": [{"shape": "cube", "pixel_coords": [1, 2, 3]}]})
