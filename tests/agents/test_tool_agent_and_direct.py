import pytest

from vadar.agents.direct import DirectAnswerer, describe_scene, parse_answer
from vadar.agents.tool_agent import ToolAgent, parse_action
from vadar.programs.answers import ERROR_ANSWER
from vadar.programs.api_text import render_api
from vadar.llm.doubles import ScriptedLLM
from vadar.sandbox import execute

BOXES = [[0.0, 0.0, 5.0, 5.0], [10.0, 0.0, 15.0, 5.0]]
NAMESPACE = {"image": "img", "loc": lambda image, prompt: [list(b) for b in BOXES],
             "depth": lambda image, box: 2.0 + box[0]}


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


@pytest.mark.parametrize(
    ("reply", "code", "answer"),
    [
        ("<execute>\nx = 1\nprint(x)\n</execute>", "x = 1\nprint(x)", None),
        ("<execute>```python\nprint(2)\n```</execute>", "print(2)", None),
        ("Done. <answer> 3 </answer>", None, "3"),
        ("<answer>yes</answer> <execute>print(1)</execute>", None, "yes"),
        ("<execute>print(1)</execute> then <answer>no</answer>", "print(1)", None),
        ("<execute>print(5)", "print(5)", None),  # unclosed tag
        ("I think it is 3", None, None),
    ],
)
def test_parse_action(reply, code, answer):
    action = parse_action(reply)
    assert action.code == code and action.answer == answer


def test_tool_agent_keeps_variables_and_shows_only_new_output():
    llm = ScriptedLLM([
        "<execute>\nboxes = loc(image, 'cube')\nprint(len(boxes))\n</execute>",
        "<execute>\nprint(depth(image, boxes[1]))\n</execute>",
        "<answer>2</answer>",
    ])
    outcome = ToolAgent(llm, run).solve("How many cubes?", render_api(), NAMESPACE)
    assert outcome.answer == "2" and outcome.error is None and outcome.attempts == 3
    assert llm.calls[1][-1]["content"].startswith("Output: 2")
    assert llm.calls[2][-1]["content"].startswith("Output: 12.0")  # not "2\n12.0": only the new step
    assert outcome.program == "boxes = loc(image, 'cube')\nprint(len(boxes))\n\nprint(depth(image, boxes[1]))"
    assert "<execute></execute>" in llm.calls[0][0]["content"] and "def loc(" in llm.calls[0][0]["content"]


def test_tool_agent_reports_errors_and_format_problems_then_recovers():
    llm = ScriptedLLM([
        "<execute>print(boxes)</execute>",  # NameError
        "The answer is two",  # neither tag
        "<answer>2</answer>",
    ])
    outcome = ToolAgent(llm, run).solve("q", render_api(), NAMESPACE)
    assert outcome.answer == "2"
    assert "NameError" in llm.calls[1][-1]["content"]
    assert "<execute></execute> or the result in <answer></answer>" in llm.calls[2][-1]["content"]


def test_tool_agent_budget_exhaustion_gives_error_marker():
    llm = ScriptedLLM(["<execute>print(1)</execute>"] * 3)
    outcome = ToolAgent(llm, run, budget=3).solve("q", render_api(), NAMESPACE)
    assert outcome.answer == ERROR_ANSWER and "within 3 replies" in outcome.error
    assert llm.remaining == 0
    assert "You must give the <answer> now." in llm.calls[2][-1]["content"]


def test_tool_agent_does_not_rerun_a_repeated_step():
    seen = []
    namespace = {**NAMESPACE, "loc": lambda image, prompt: seen.append(prompt) or [list(b) for b in BOXES]}
    llm = ScriptedLLM([
        "<execute>\nboxes = loc(image, 'cube')\nprint(len(boxes))\n</execute>",
        "<execute>\nboxes = loc(image, 'cube')  \n\nprint(len(boxes))</execute>",  # the same step, re-typed
        "<execute>print(len(loc(image, 'sphere')))</execute>",
        "<answer>2</answer>",
    ])
    outcome = ToolAgent(llm, run).solve("q", render_api(), namespace)
    assert outcome.answer == "2" and outcome.attempts == 4
    repeat_notice = llm.calls[2][-1]["content"]
    assert "You already ran exactly this step" in repeat_notice and "Output: 2" in repeat_notice  # the result again
    assert llm.calls[3][-1]["content"].startswith("Output: 2")  # the new step ran, after the replayed first
    assert outcome.program.count("loc(image, 'cube')") == 1
    assert seen == ["cube", "cube", "sphere"]  # step 1, then step 1 replayed before step 3; step 2 never ran


def test_a_repeated_failing_step_asks_for_a_fix_not_an_answer():
    llm = ScriptedLLM(["<execute>print(boxes)</execute>"] * 2 + ["<answer>0</answer>"])
    ToolAgent(llm, run).solve("q", render_api(), NAMESPACE)
    notice = llm.calls[2][-1]["content"]
    assert "NameError" in notice and "fix the step or run a different one" in notice
    assert "Give the <answer> using this result" not in notice


SCENE = {"objects": [{"color": "red", "shape": "cube", "3d_coords": [1.23456, 2.0, 0.35],
                      "mask": list(range(1000))}]}


def test_describe_scene_rounds_and_drops_bulky_fields():
    text = describe_scene(SCENE)
    assert text == 'object 0: {"color": "red", "shape": "cube", "3d_coords": [1.235, 2.0, 0.35]}'


def test_direct_answers_from_scene_text_and_retries_format():
    llm = ScriptedLLM(["Let me think about this.\nThere is one.", "<answer>1</answer>"])
    outcome = DirectAnswerer(llm).solve("How many red cubes?", scene=SCENE)
    assert outcome.answer == "1" and outcome.attempts == 2
    assert '"color": "red"' in llm.calls[0][0]["content"]


def test_direct_sends_the_image_when_no_scene(tmp_path):
    image = tmp_path / "x.png"
    image.write_bytes(b"\x89PNG fake")
    llm = ScriptedLLM(["<answer>no</answer>"])
    DirectAnswerer(llm).solve("Is it red?", image_path=image)
    part = llm.calls[0][1]["content"][1]
    assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/png;base64,")


def test_parse_answer():
    assert parse_answer("<answer> cube </answer>") == "cube"
    assert parse_answer("yes") == "yes"
    assert parse_answer("a long\nexplanation") is None


def test_direct_is_told_what_the_question_s_region_identifiers_point_at(tmp_path):
    from base_modules.types import Region

    regions = (Region("<pallet_0>", (10.0, 20.0, 60.5, 80.0), object_id=3), Region("<region_1>", (1.0, 2.0, 3.0, 4.0)))
    llm = ScriptedLLM(["<answer>left</answer>"])
    DirectAnswerer(llm).solve("Is the pallet <pallet_0> left of <region_1>?", scene=SCENE, regions=regions)
    system = llm.calls[0][0]["content"]
    assert system.endswith("Regions the question points at (its identifiers):\n"
                           "<pallet_0>: the object with id 3\n"
                           "<region_1>: the object in the box [1, 2, 3, 4] (x0, y0, x1, y1 in pixels)\n")
    image = tmp_path / "x.png"
    image.write_bytes(b"\x89PNG fake")
    llm = ScriptedLLM(["<answer>left</answer>"])
    DirectAnswerer(llm).solve("Is the pallet <pallet_0> left?", image_path=image, regions=regions[:1])
    assert llm.calls[0][0]["content"].endswith("<pallet_0>: the object in the box [10, 20, 60, 80] (x0, y0, x1, y1 in pixels)\n")


def test_direct_without_regions_sends_the_same_system_prompt_as_before():
    llm = ScriptedLLM(["<answer>1</answer>"])
    DirectAnswerer(llm).solve("How many red cubes?", scene=SCENE)
    assert llm.calls[0][0]["content"].endswith('Scene annotations (one object per line):\n' + describe_scene(SCENE) + "\n")
    assert "Regions" not in llm.calls[0][0]["content"]


def test_describe_scene_leaves_out_what_other_fields_determine():
    obj = {"id": 2, "category_name": "pallet", "dimensions": [1.2, 1.0, 0.144], "center_world": [1.0, 2.0, 0.072],
           "yaw_world": 0.5, "depth": 8.9, "R_cam": [[1.0, 0.0, 0.0]] * 3, "bbox3D_world": [[0.0, 0.0, 0.0]] * 8,
           "bbox3D_cam": [[0.0, 0.0, 0.0]] * 8, "bbox2D_proj": [1.0, 2.0, 3.0, 4.0], "bbox2D_visible": [1.0, 2.0, 3.0, 4.0],
           "mask_value": 3, "visible_pixels": 500}
    text = describe_scene({"objects": [obj]})
    assert text == ('object 0: {"id": 2, "category_name": "pallet", "dimensions": [1.2, 1.0, 0.144], '
                    '"center_world": [1.0, 2.0, 0.072], "yaw_world": 0.5, "depth": 8.9, "bbox2D_visible": [1.0, 2.0, 3.0, 4.0]}')
