"""A question's shape from its text: one row per generated family and per CLEVR template."""

from __future__ import annotations

import pytest

from vadar.programs.question_shape import QuestionShape, shape_of

S = QuestionShape

GENERATED = [  # (family, question, shape): every family of omni3d_bench/generator/questions.py
    ("count_class", "How many chairs are there?", S("count", None)),
    ("count_attribute", "How many wooden tables are there?", S("count", None)),
    ("count_relation", "How many objects are taller than the red chair?", S("count", "comparison", "height")),
    ("count_relation", "How many objects are closer to the camera than the red chair?",
     S("count", "comparison", "depth", ("front",))),
    ("metric_distance", "What is the distance between the chair and the lamp in meters?",
     S("measure", "distance", "distance")),
    ("metric_height", "How tall is the orange box in meters?", S("measure", None, "height")),
    ("size_ratio", "How many times taller is the bin than the orange box?", S("measure", "ratio", "height")),
    ("depth_difference", "How much farther from the camera is the bin than the lamp, in meters?",
     S("measure", "difference", "depth", ("behind",))),
    ("fit_count", "How many mugs as tall as the blue mug could be stacked on top of each other within the "
                  "height of the table?", S("count", "ratio", "height")),
    ("yes_no", "Is the chair to the left of the table?", S("yes/no", "spatial", None, ("left",))),
    ("yes_no", "Is the chair in front of the table?", S("yes/no", "spatial", None, ("front",))),
    ("yes_no", "Is the chair taller than the table?", S("yes/no", "comparison", "height")),
    ("yes_no", "Is the chair closer to the table than to the lamp?", S("yes/no", "distance", "distance")),
    ("multiple_choice", "Which is the tallest: the chair, the lamp, or the bin?",
     S("choice", "superlative", "height")),
    ("multiple_choice", "Which is the closest to the camera: the chair, the lamp, or the bin?",
     S("choice", "superlative", "depth")),
    ("multi_step_height", "How tall, in meters, is the object immediately to the left of the lamp?",
     S("measure", "spatial", "height", ("left",))),
    ("multi_step_color", "What color is the object closest to the wooden chair?", S("attribute", "nearest", "color")),
]

OTHER = [  # (generator, question, shape): the multi-view and warehouse generators
    ("views", "Which of these objects is closest to the sofa: the lamp, the mug, or the bin?",
     S("choice", "nearest", "distance")),
    ("views", "If I am standing by the bin and facing the box, is the stool to my left, to my right, or behind me?",
     S("choice", "spatial", None, ("left", "right", "behind"))),
    ("warehouse", "Is the pallet <mask> to the left or the right of the forklift <mask>?",
     S("choice", "spatial", None, ("left", "right"))),
    ("warehouse", "Among the pallets <mask> <mask>, which is the closest to the camera?",
     S("choice", "superlative", "depth")),
]

CLEVR = [  # (template/operator, question, shape): the CLEVR 1.0 templates of ../shared/data/clevr
    ("zero_hop/count", "How many blue cylinders are there?", S("count", None)),
    ("zero_hop/exist", "Is there a small purple matte cylinder?", S("exists", None)),
    ("zero_hop/exist", "Are any big yellow spheres visible?", S("exists", None)),
    ("zero_hop/query_color", "The rubber block is what color?", S("attribute", None, "color")),
    ("zero_hop/query_material", "What is the material of the small cylinder?", S("attribute", None, "material")),
    ("zero_hop/query_size", "How big is the ball?", S("attribute", None, "size")),
    ("one_hop/count", "How many red blocks are to the right of the purple rubber ball?",
     S("count", "spatial", None, ("right",))),
    ("one_hop/exist", "There is a brown metallic thing; are there any small purple rubber spheres left of it?",
     S("exists", "spatial", None, ("left",))),
    ("one_hop/query_shape", "The tiny purple rubber object that is in front of the purple rubber cube has what "
                            "shape?", S("attribute", "spatial", "shape", ("front",))),
    ("two_hop/query_material", "There is a large thing that is right of the cylinder that is on the right side of "
                               "the small green matte cube; what is it made of?",
     S("attribute", "spatial", "material", ("right",))),
    ("three_hop/exist", "There is a big matte cylinder that is in front of the big yellow matte block in front of "
                        "the large gray object; is there a blue rubber cylinder that is right of it?",
     S("exists", "spatial", None, ("right", "front"))),
    ("single_and/count", "How many things are both to the right of the small brown cube and behind the small "
                         "rubber cylinder?", S("count", "spatial", None, ("right", "behind"))),
    ("single_or/count", "How many things are either big gray matte cylinders or small cyan matte things?",
     S("count", "either")),
    ("same_relate/exist", "Is there any other thing of the same color as the tiny object?",
     S("exists", "shared", "color")),
    ("same_relate/count", "How many other things are there of the same shape as the blue matte thing?",
     S("count", "shared", "shape")),
    ("same_relate/query_size", "What is the size of the other cylinder that is the same color as the rubber "
                               "cylinder?", S("attribute", "shared", "size")),
    ("comparison/equal_material", "Are the small blue object and the purple object made of the same material?",
     S("yes/no", "shared", "material")),
    ("comparison/equal_size", "There is a rubber cylinder in front of the red cylinder; is its size the same as "
                              "the small rubber block?", S("yes/no", "shared", "size", ("front",))),
    ("compare_integer/greater_than", "Are there more brown cylinders than purple cubes?",
     S("yes/no", "count comparison", "more")),
    ("compare_integer/less_than", "Is the number of tiny brown cubes less than the number of tiny matte cubes?",
     S("yes/no", "count comparison", "fewer")),
    ("compare_integer/equal_integer", "Are there an equal number of tiny purple metal things and tiny blue "
                                      "metallic objects?", S("yes/no", "count comparison", "equal")),
]


@pytest.mark.parametrize("kind, question, shape", GENERATED + OTHER + CLEVR,
                         ids=[k for k, _, _ in GENERATED + OTHER + CLEVR])
def test_the_shape_of_each_family_and_template(kind, question, shape):
    assert shape_of(question) == shape


def test_a_family_sets_only_the_spatial_relations_aside():
    left, behind = shape_of("How many cubes are left of the ball?"), shape_of("How many cubes are behind the ball?")
    assert left != behind and left.family == behind.family
    assert shape_of("What color is the cube?").family != shape_of("What shape is the cube?").family
    # the counting question that shares the ratio question's words is of another answer kind
    assert shape_of("How many objects are taller than the box?").answer == "count"
    assert shape_of("How many times taller is the bin than the box?").answer == "measure"
