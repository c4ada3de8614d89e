"""Unit tests on the generated benchmark: the model sketches scenes in its annotation format
(class, colour, material, camera-frame centre, size), and programs run on them with the 3D oracles."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from base_modules.oracle.annotations3d import annotations3d_oracle_modules, is_annotations3d_scene
from omni3d_bench.datasets import BenchDataset
from omni3d_bench.generator.sketch import SketchError, sketch_scene
from regions_scene import region_record, write_bench
from vadar.programs.api_text import render_api
from vadar.agents.program import ProgramAgent
from vadar.agents.unit_tests import BENCH_SCENES, TestScenes, UnitCheck, UnitTest, UnitTestRecord, parse_tests
from vadar.config import ReasoningConfig, VadarConfig
from vadar.programs.namespace import sketch_scene_namespace
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.methods import LibrarySnapshot, build_answerer
from vadar.sandbox import execute

SCENES = TestScenes(BENCH_SCENES, sketch_scene_namespace())


def item(category: str, color: str, material: str, x: float, z: float, size: tuple[float, float, float]) -> dict:
    w, length, h = size
    return {"category": category, "color": color, "material": material, "x": x, "z": z, "w": w, "l": length, "h": h}


CHAIR = (0.5, 0.5, 0.9)
CABINET = item("cabinet", "blue", "metal", 1.2, 6.0, (0.8, 0.45, 1.1))
BOX = item("box", "red", "wood", -1.5, 4.0, (0.45, 0.35, 0.32))


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=20, memory_mb=1024)


def pinhole_box(obj: dict) -> list[float]:
    """The 2D box of a block standing on the floor, worked out here from the camera's pose alone:
    1.8 m above the floor, looking at (0, 4.5, 0.35) from (0, 0, 1.8), fx = 460, 480 x 320 pixels."""
    pitch = math.atan2(1.8 - 0.35, 4.5)
    s, c = math.sin(pitch), math.cos(pitch)
    down_y = (1.8 - obj["h"] / 2 - obj["z"] * s) / c  # camera-frame y of the centre: its world height is h / 2
    us, vs = [], []
    for dx in (-obj["w"] / 2, obj["w"] / 2):
        for dy in (-obj["l"] / 2, obj["l"] / 2):  # world y: away from the camera, along the floor
            for dz in (-obj["h"] / 2, obj["h"] / 2):  # world z: up
                x = obj["x"] + dx
                y = down_y - dy * s - dz * c
                z = obj["z"] + dy * c - dz * s
                us.append(460 * x / z + 240)
                vs.append(460 * y / z + 160)
    return [min(us), min(vs), max(us), max(vs)]


def test_a_sketched_scene_gives_3d_oracles_that_agree_with_an_independent_projection():
    namespace = SCENES.namespace([CABINET, BOX])
    image, loc, depth = namespace["image"], namespace["loc"], namespace["depth"]
    assert image.focal_length == 460 and (image.width, image.height) == (480, 320)
    for obj, phrase in ((CABINET, "blue metal cupboard"), (BOX, "wooden crate")):  # the benchmark's synonyms
        [box] = loc(image, phrase)
        assert box == pytest.approx(pinhole_box(obj), abs=1e-3)
        assert depth(image, box) == pytest.approx(obj["z"])
        assert namespace["vqa"](image, "What color is this object?", box) == obj["color"]
        width, height = namespace["get_2D_object_size"](image, box)
        assert (width, height) == pytest.approx((box[2] - box[0], box[3] - box[1]))
    assert len(loc(image, "objects")) == 2 and loc(image, "chairs") == []
    scene = sketch_scene([CABINET, BOX])
    assert [o["center_world"][2] for o in scene["objects"]] == pytest.approx([0.55, 0.16])  # standing on the floor
    assert [o["center_cam"][0] for o in scene["objects"]] == pytest.approx([1.2, -1.5])
    program = ("a = loc(image, 'cabinet')[0]\nb = loc(image, 'box')[0]\n"
               "final_result = 'yes' if depth(image, b) < depth(image, a) else 'no'")
    assert run(program, namespace).value == "yes"


def test_the_annotation_is_the_benchmarks_own_format():
    scene = sketch_scene([CABINET])
    [obj] = scene["objects"]
    assert {"category_name", "color", "material", "bbox2D_proj", "dimensions", "center_cam", "depth",
            "center_world", "bbox3D_cam"} <= set(obj)
    assert obj["dimensions"] == [0.8, 0.45, 1.1] and scene["camera"]["K"][0][0] == 460
    assert is_annotations3d_scene(scene) and "cupboard" in scene["vocabulary"]["category"]["cabinet"]


@pytest.mark.parametrize(("objects", "reason"), [
    ([item("chair", "red", "wood", 0.0, 2.0, CHAIR)], re.escape("object 1 (red wood chair at x=0, z=2 (0.5 x 0.5 x 0.9 m)) "
                                                                "is not inside the image")),
    ([item("chair", "red", "wood", 4.0, 4.0, CHAIR)], "keep z from 3 to 10 and x between -z/3 and z/3"),
    ([item("chair", "red", "wood", 0.0, 5.0, CHAIR), item("stool", "red", "wood", 0.2, 5.1, (0.36, 0.36, 0.65))],
     "objects 1 and 2 .* overlap"),
])
def test_a_sketch_that_cannot_be_a_scene_is_refused_with_the_reason(objects, reason):
    with pytest.raises(SketchError, match=reason):
        sketch_scene(objects)
    with pytest.raises(ValueError, match="scene 1: .*" + reason):
        parse_tests(json.dumps({"scenes": [{"objects": objects, "answer": 1}]}), BENCH_SCENES)


QUESTION = "How many wooden chairs are there?"
SKETCHES = json.dumps({"scenes": [
    {"objects": [item("chair", "red", "wood", -1, 4, CHAIR), item("chair", "red", "metal", 1, 4, CHAIR)], "answer": 1},
    {"objects": [item("chair", "red", "wood", -1, 5, CHAIR), item("chair", "blue", "wood", 1, 5, CHAIR),
                 item("table", "brown", "wood", 0, 8, (1.2, 0.7, 0.75))], "answer": 2},
]})
COUNT_CHAIRS = "```python\nfinal_result = len(loc(image, 'chair'))\n```"
COUNT_WOODEN_CHAIRS = "```python\nfinal_result = len(loc(image, 'wooden chair'))\n```"


def test_a_program_failing_the_models_sketched_scene_is_repaired():
    real = SCENES.namespace([item("chair", "red", "metal", -2, 6, CHAIR), item("chair", "red", "wood", 0, 6, CHAIR),
                             item("chair", "red", "plastic", 2, 6, CHAIR)])
    out_of_frame = json.dumps({"scenes": [{"objects": [item("chair", "red", "wood", 0, 2, CHAIR)], "answer": 1}]})
    llm = ScriptedLLM([out_of_frame, SKETCHES, COUNT_CHAIRS, COUNT_WOODEN_CHAIRS])
    outcome = ProgramAgent(llm, run, reasoning=ReasoningConfig(tests=True)).solve(
        QUESTION, render_api(), real, test_scenes=SCENES)
    assert "scene 1: object 1 (red wood chair at x=0, z=2" in llm.calls[1][-1]["content"]  # asked again once
    assert outcome.answer == 1 and "'wooden chair'" in outcome.program
    feedback = llm.calls[3][-1]["content"]
    assert ("On a test scene with red wood chair at x=-1, z=4 (0.5 x 0.5 x 0.9 m); red metal chair at x=1, z=4 "
            "(0.5 x 0.5 x 0.9 m), the program answered 2; the expected answer is 1.") in feedback
    tests = outcome.techniques.get(UnitTestRecord)
    assert tests.passed == 2 and len(tests.refused) == 1
    assert llm.requests[0]["response_format"]["json_schema"]["schema"] == BENCH_SCENES.schema
    assert llm.requests[0]["max_tokens"] == 900  # eight fields an object: longer than CLEVR's 600
    assert '"x" and "z": where its centre is' in llm.calls[0][0]["content"]
    assert "(one of chair, table, stool, cabinet, box, ball, lamp, bin, mug, book)" in llm.calls[0][0]["content"]


def test_measurements_pass_within_the_kinds_tolerance_and_counts_exactly():
    chair = item("chair", "red", "wood", 0, 4, CHAIR)
    height = ("b = loc(image, 'chair')[0]\n"
              "final_result = (b[3] - b[1]) * depth(image, b) / image.focal_length")
    check = UnitCheck([UnitTest([chair], 0.9)], SCENES, run, rel_tol=1e-3)
    assert check.failure(height) is None  # the projected box of a chair seen from above is taller than 0.9 m
    assert "expected answer is 0.9" in check.failure("final_result = 2 * 0.9")
    counts = UnitCheck([UnitTest([chair], 3)], SCENES, run, rel_tol=1e-3)
    assert "answered 4" in counts.failure("final_result = 4")  # 4 is within 40% of 3, but a count is exact
    whole = UnitCheck([UnitTest([chair], 1)], SCENES, run, rel_tol=1e-3)
    assert whole.failure(height) is None  # a measured decimal against a whole expected number of metres


def test_a_question_with_regions_gets_no_test_scenes(tmp_path: Path):
    """Test scenes have no regions to point at (the warehouse benchmark's questions all do)."""
    bench = BenchDataset(write_bench(tmp_path / "bench", [
        {"question_id": "q-count", "question": "How many pallets are in the buffer region <mask>?", "answer": "1",
         "answer_type": "int", "regions": [region_record(3, with_id=False)]}]))
    config = VadarConfig()
    config.reasoning.tests = True
    llm = ScriptedLLM(['final_result = sum(1 for box in loc(image, "pallet") if inside(image, box, "<buffer_0>"))'])
    solve = build_answerer("static-api", LibrarySnapshot(), llm=llm, executor=run, config=config, dataset=bench,
                           modules=annotations3d_oracle_modules(bench.scene), backends={})
    outcome = solve(bench.questions("test")[0])
    assert outcome.answer == 1 and len(llm.requests) == 1 and outcome.techniques.get(UnitTestRecord) is None


def test_a_plain_question_of_the_benchmark_asks_for_sketches(tmp_path: Path):
    bench = BenchDataset(write_bench(tmp_path / "bench", [
        {"question_id": "q", "question": "How many boxes are there?", "answer": "1", "answer_type": "int"}]))
    config = VadarConfig()
    config.reasoning.tests = True
    two_boxes = json.dumps({"scenes": [{"objects": [BOX, {**BOX, "x": 1.5}], "answer": 2}]})
    llm = ScriptedLLM([two_boxes, "final_result = len(loc(image, 'boxes'))"])
    solve = build_answerer("static-api", LibrarySnapshot(), llm=llm, executor=run, config=config, dataset=bench,
                           modules=annotations3d_oracle_modules(bench.scene), backends={})
    outcome = solve(bench.questions("test")[0])
    assert outcome.answer == 1 and outcome.techniques.get(UnitTestRecord).passed == 1
    assert llm.requests[0]["response_format"]["json_schema"]["schema"] == BENCH_SCENES.schema
