"""CLEVR-format questions for the built-in sample, answered by executing their programs."""

from __future__ import annotations

import random
from typing import Any

from omni3d_bench.datasets.clevr_programs import ProgramError, answer

PLURAL = {"cube": "cubes", "sphere": "spheres", "cylinder": "cylinders"}
RELATION_TEXT = {"left": "left of", "right": "right of", "behind": "behind", "front": "in front of"}

# (family index, template name) per question kind; each image asks three kinds.
FAMILIES = {
    "count": (0, "sample_count.json"),
    "exist": (1, "sample_exist.json"),
    "query": (2, "sample_query.json"),
    "relate_count": (3, "sample_relate_count.json"),
    "relate_query": (4, "sample_relate_query.json"),
    "compare": (5, "sample_compare.json"),
}
PLAN = (
    ("count", "relate_count", "query"),
    ("exist", "relate_query", "compare"),
    ("count", "relate_count", "query"),
    ("exist", "relate_query", "compare"),
)


class Program:
    """Builds a CLEVR program node by node, tracking each node's index for `inputs`."""

    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []

    def add(self, function: str, inputs: list[int] | None = None,
            value: str | None = None) -> int:
        if inputs is None:
            inputs = [len(self.nodes) - 1] if self.nodes else []
        self.nodes.append({"inputs": inputs, "function": function,
                           "value_inputs": [] if value is None else [value]})
        return len(self.nodes) - 1


def the_object(prog: Program, obj: dict[str, Any]) -> int:
    """scene -> filter_color -> filter_shape -> unique; colours are unique in sample scenes."""
    prog.add("scene")
    prog.add("filter_color", value=obj["color"])
    prog.add("filter_shape", value=obj["shape"])
    return prog.add("unique")


def count_question(scene: dict[str, Any], rng: random.Random, variant: int) -> tuple[str, Program]:
    prog = Program()
    prog.add("scene")
    if variant % 2 == 0:
        shape = rng.choice(sorted(PLURAL))
        prog.add("filter_shape", value=shape)
        text = f"How many {PLURAL[shape]} are there?"
    else:
        size = rng.choice(["large", "small"])
        prog.add("filter_size", value=size)
        text = f"How many {size} things are there?"
    prog.add("count")
    return text, prog


def exist_question(scene: dict[str, Any], rng: random.Random, variant: int) -> tuple[str, Program]:
    present = {(o["material"], o["shape"]) for o in scene["objects"]}
    combos = sorted((m, s) for m in ("metal", "rubber") for s in PLURAL)
    wanted = [c for c in combos if (c in present) == (variant % 2 == 0)] or combos
    material, shape = rng.choice(wanted)
    prog = Program()
    prog.add("scene")
    prog.add("filter_material", value=material)
    prog.add("filter_shape", value=shape)
    prog.add("exist")
    return f"Are there any {material} {PLURAL[shape]}?", prog


def query_question(scene: dict[str, Any], rng: random.Random, variant: int) -> tuple[str, Program]:
    obj = rng.choice(scene["objects"])
    prog = Program()
    if variant % 2 == 0:
        prog.add("scene")
        prog.add("filter_color", value=obj["color"])
        prog.add("unique")
        prog.add("query_shape")
        return f"What shape is the {obj['color']} object?", prog
    the_object(prog, obj)
    prog.add("query_material")
    return f"What material is the {obj['color']} {obj['shape']}?", prog


def relate_count_question(scene: dict[str, Any], rng: random.Random,
                          variant: int) -> tuple[str, Program]:
    obj = rng.choice(scene["objects"])
    relation = ("left", "front")[variant % 2]
    prog = Program()
    the_object(prog, obj)
    prog.add("relate", value=relation)
    prog.add("count")
    text = f"How many things are {RELATION_TEXT[relation]} the {obj['color']} {obj['shape']}?"
    return text, prog


def relate_query_question(scene: dict[str, Any], rng: random.Random,
                          variant: int) -> tuple[str, Program]:
    """'What color is the <shape> <relation> the <anchor>?' where exactly one object fits."""
    relation = ("behind", "right")[variant % 2]
    options = []
    for i, anchor in enumerate(scene["objects"]):
        related = scene["relationships"][relation][i]
        for shape in sorted(PLURAL):
            hits = [j for j in related if scene["objects"][j]["shape"] == shape]
            if len(hits) == 1:
                options.append((anchor, shape))
    if not options:
        raise ProgramError(f"no unique '{relation}' reference in scene {scene['image_index']}")
    anchor, shape = rng.choice(options)
    prog = Program()
    the_object(prog, anchor)
    prog.add("relate", value=relation)
    prog.add("filter_shape", value=shape)
    prog.add("unique")
    prog.add("query_color")
    text = (f"What color is the {shape} that is {RELATION_TEXT[relation]} the "
            f"{anchor['color']} {anchor['shape']}?")
    return text, prog


def compare_question(scene: dict[str, Any], rng: random.Random,
                     variant: int) -> tuple[str, Program]:
    first, second = rng.sample(sorted(PLURAL), 2)
    function, word = ("greater_than", "more") if variant % 2 == 0 else ("less_than", "fewer")
    prog = Program()
    prog.add("scene")
    prog.add("filter_shape", value=first)
    left = prog.add("count")
    prog.add("scene")
    prog.add("filter_shape", value=second)
    right = prog.add("count")
    prog.add(function, inputs=[left, right])
    return f"Are there {word} {PLURAL[first]} than {PLURAL[second]}?", prog


BUILDERS = {
    "count": count_question, "exist": exist_question, "query": query_question,
    "relate_count": relate_count_question, "relate_query": relate_query_question,
    "compare": compare_question,
}


def build_questions(scenes: list[dict[str, Any]], split: str, seed: int = 7) -> list[dict[str, Any]]:
    """Three questions per scene following PLAN, with answers computed from the scene."""
    questions: list[dict[str, Any]] = []
    for scene in scenes:
        index = scene["image_index"]
        rng = random.Random(seed * 1000 + index)
        for kind in PLAN[index % len(PLAN)]:
            text, prog = BUILDERS[kind](scene, rng, index // 2)
            family, template = FAMILIES[kind]
            questions.append({
                "split": split,
                "image_index": index,
                "image_filename": scene["image_filename"],
                "question_index": len(questions),
                "question": text,
                "answer": answer(prog.nodes, scene),
                "program": prog.nodes,
                "question_family_index": family,
                "template_filename": template,
            })
    return questions
