"""`vadar solve --region`: boxes and region files from the command line, named from the
question's `<mask>` tokens, reaching the Program agent and the sandbox (scripted LLM, the built-in
CLEVR sample with its scene file as `--scene`)."""

from __future__ import annotations

import io
import json
import re
from base64 import b64decode

import numpy as np
import pytest
from PIL import Image as PILImage
from typer.testing import CliRunner

from base_modules.masks import decode_rle, encode_rle
from base_modules.types import Region
from omni3d_bench import sample_path
from omni3d_bench.datasets.single import SingleQuestionDataset
from omni3d_bench.region_args import read_region_arg
from omni3d_bench.types import DatasetError
from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM
from scripted_jobs import answer_jobs_with

runner = CliRunner()
ROOT = sample_path()
SCENES = next((ROOT / "scenes").glob("*.json"))
SCENE = json.loads(SCENES.read_text())["scenes"][0]
IMAGE = ROOT / "images" / SCENE["image_filename"]  # 480 x 320
WIDTH, HEIGHT = 480, 320
CYLINDER = "96,114,131,155"  # the small purple cylinder, as the CLEVR oracle's loc frames it
SPHERE = (328, 135, 363, 169)  # the small red sphere
QUESTION = "Is the cylinder <mask> left of the sphere <mask>?"


def script(monkeypatch, tmp_path, replies):
    llm = ScriptedLLM([f"```python\n{r}\n```" if "final_result" in r and "```" not in r else r for r in replies])
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")
    return llm


def mask_of(box, size=(HEIGHT, WIDTH)) -> np.ndarray:
    mask = np.zeros(size, bool)
    x0, y0, x1, y1 = box
    mask[y0:y1, x0:x1] = True
    return mask


@pytest.fixture
def sphere_json(tmp_path):
    path = tmp_path / "sphere.json"
    path.write_text(json.dumps({"mask": encode_rle(mask_of(SPHERE))}))
    return path


def solve(*args):
    return runner.invoke(app, ["solve", "--image", str(IMAGE), "--scene", str(SCENES), *args])


def test_box_and_json_regions_reach_the_program_and_its_tools(monkeypatch, tmp_path, sphere_json):
    program = ("left = is_left(image, 0, 1)\n"
               "final_result = [left, region(0), round(depth(image, region(1)), 3)]")
    llm = script(monkeypatch, tmp_path, [program])
    # a question whose wording fixes no kind of answer, so the program may answer what it read
    question = "Report whether the cylinder <mask> is left of the sphere <mask>, its box and the sphere's depth."
    result = solve("--region", CYLINDER, "--region", str(sphere_json), "--question", question)
    assert result.exit_code == 0, result.output
    sphere_depth = round(next(o for o in SCENE["objects"] if o["shape"] == "sphere")["pixel_coords"][2], 3)
    # is_left from the box centre and the mask centroid; depth resolves region(1)'s box to the sphere
    assert f"answer: ['yes', [96.0, 114.0, 131.0, 155.0], {sphere_depth}]" in result.output
    assert "<cylinder_0>: box [96.0, 114.0, 131.0, 155.0]" in result.output
    assert "<sphere_0>: box [328.0, 135.0, 363.0, 169.0], mask" in result.output
    system, user = (m["content"] for m in llm.requests[0]["messages"][:2])
    assert "# Regions of this question: <cylinder_0>, <sphere_0>" in system
    assert "def is_left(image: Image, region_a: Region, region_b: Region) -> bool:" in system
    assert "Question: Report whether the cylinder <cylinder_0> is left of the sphere <sphere_0>," in user
    assert "<mask>" not in user


def test_the_regions_order_follows_the_tokens(monkeypatch, tmp_path, sphere_json):
    script(monkeypatch, tmp_path, ['final_result = is_left(image, "<sphere_0>", "<cylinder_0>")'])
    result = solve("--region", str(sphere_json), "--region", CYLINDER,
                   "--question", "Is the sphere <mask> left of the cylinder <mask>?")
    assert result.exit_code == 0, result.output
    assert "answer: no" in result.output  # a str question: booleans read as yes/no


def test_a_question_without_regions_sends_the_requests_recorded_before(monkeypatch, tmp_path):
    """The recorded static-api requests for the sample's first question (test_options_off's fixture)."""
    from recorded_requests import RECORDED, SCRIPT

    llm = script(monkeypatch, tmp_path, SCRIPT)
    question = json.loads((ROOT / "questions" / "sample.json").read_text())["questions"][0]["question"]
    result = solve("--no-library", "--question", question)
    assert result.exit_code == 0, result.output
    recorded = [{k: v for k, v in r.items() if k not in ("method", "key")}
                for r in json.loads(RECORDED.read_text(encoding="utf-8"))[:2]]
    assert len(llm.requests) == 2 and json.loads(json.dumps(llm.requests)) == recorded


def test_region_files_json_png_and_npy(tmp_path):
    compressed = encode_rle(mask_of(SPHERE))
    runs = {"size": compressed["size"], "counts": [int(v) for v in _runs(compressed)]}
    (tmp_path / "list.json").write_text(json.dumps({"mask": runs, "object_id": 3}))
    (tmp_path / "box.json").write_text(json.dumps({"box": [1, 2, 30.5, 40]}))
    PILImage.fromarray(mask_of(SPHERE).astype("uint8") * 255).save(tmp_path / "mask.png")
    rgba = np.zeros((HEIGHT, WIDTH, 4), "uint8")
    rgba[..., 3] = mask_of(SPHERE) * 255
    PILImage.fromarray(rgba, "RGBA").save(tmp_path / "alpha.png")
    np.save(tmp_path / "mask.npy", mask_of(SPHERE).astype("uint8"))
    listed = read_region_arg(str(tmp_path / "list.json"))
    assert listed.mask_counts == compressed["counts"] and listed.object_id == 3
    assert listed.box == (328.0, 135.0, 363.0, 169.0)
    assert read_region_arg(str(tmp_path / "box.json")) == Region("", (1.0, 2.0, 30.5, 40.0))
    for name in ("mask.png", "alpha.png", "mask.npy"):
        region = read_region_arg(str(tmp_path / name))
        assert region.mask_counts == compressed["counts"] and region.box == listed.box, name
    assert read_region_arg(" 1.5, 2,3e1 ,40") == Region("", (1.5, 2.0, 30.0, 40.0))


def _runs(rle):
    from base_modules.masks import rle_counts

    assert decode_rle(rle).sum() == (SPHERE[2] - SPHERE[0]) * (SPHERE[3] - SPHERE[1])
    return rle_counts(rle)


def test_the_dataset_names_regions_like_data_sets_do():
    data = SingleQuestionDataset(IMAGE, "Which of the pallets <mask>, <mask> is closer to <mask>?",
                                 regions=["0,0,10,10", "10,0,20,10", Region("", (5.0, 5.0, 9.0, 9.0))])
    question = data.questions("single")[0]
    assert question.question == "Which of the pallets <pallet_0>, <pallet_1> is closer to <region_0>?"
    assert [r.name for r in question.regions] == ["<pallet_0>", "<pallet_1>", "<region_0>"]
    plain = SingleQuestionDataset(IMAGE, "  How many cubes?  ").questions("single")[0]
    assert plain.question == "How many cubes?" and plain.regions == ()


@pytest.mark.parametrize("args, message", [
    (["--region", "10,20,110"], "--region 10,20,110: a box is four numbers, x0,y0,x1,y1 (pixels)"),
    (["--region", "10,20,5,220"], "--region 10,20,5,220: a box needs x1 > x0 and y1 > y0"),
    (["--region", "10,20,10,220"], "a box needs x1 > x0 and y1 > y0"),
    (["--region", "nowhere.json"], "--region nowhere.json: no such file; give a box x0,y0,x1,y1"),
    (["--region", "0,0,10,10"], "the question has 2 <mask> token(s) but 1 --region option(s); "
                                "give one --region per token, in order"),
    ([], "the question has 2 <mask> token(s) but 0 --region option(s)"),
    (["--region", "0,0,10,10", "--region", "400,300,481,320"],
     "--region 400,300,481,320: the box 400,300,481,320 leaves the image (0,0,480,320)"),
    (["--region", "-1,0,10,10", "--region", "0,0,10,10"], "leaves the image"),
])
def test_bad_regions_are_one_line_errors(monkeypatch, tmp_path, args, message):
    llm = script(monkeypatch, tmp_path, [])
    result = solve(*args, "--question", QUESTION)
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert llm.requests == []


def test_bad_region_files_are_one_line_errors(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "empty.json").write_text(json.dumps({"object_id": 2}))
    (tmp_path / "small.json").write_text(json.dumps({"mask": encode_rle(mask_of((1, 1, 5, 5), (10, 10)))}))
    (tmp_path / "blank.npy").write_bytes(b"")
    np.save(tmp_path / "cube.npy", np.ones((2, 2, 2)))
    np.save(tmp_path / "zero.npy", np.zeros((HEIGHT, WIDTH)))
    (tmp_path / "text.png").write_text("not an image")
    cases = {"bad.json": "not valid JSON", "empty.json": "a region needs a 'box' or a non-empty 'mask'",
             "small.json": "the mask is 10x10 pixels but the image is 480x320",
             "blank.npy": "cannot read the mask", "cube.npy": "a mask must be a 2D array",
             "zero.npy": "the mask is empty", "text.png": "not a mask image"}
    for name, message in cases.items():
        with pytest.raises(DatasetError, match=re.escape(message)) as caught:
            SingleQuestionDataset(IMAGE, "Where is <mask>?", regions=[str(tmp_path / name)])
        assert str(caught.value).startswith(f"--region {tmp_path / name}: ")
    with pytest.raises(DatasetError, match="cannot be used with several frames"):
        SingleQuestionDataset([IMAGE, IMAGE], "Where is <mask>?", regions=["0,0,5,5"])


def test_the_page_draws_the_regions(monkeypatch, tmp_path, sphere_json):
    script(monkeypatch, tmp_path, ["final_result = is_left(image, 0, 1)"])
    page = tmp_path / "page.html"
    result = solve("--region", CYLINDER, "--region", str(sphere_json), "--question", QUESTION,
                   "--html", str(page))
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert "Is the cylinder &lt;cylinder_0&gt; left of the sphere &lt;sphere_0&gt;?" in html
    assert 'data-boxes="2"' in html  # no call returned a box: the two marks are the regions'
    encoded = re.search(r'src="data:image/jpeg;base64,([^"]+)"', html).group(1)
    drawn = PILImage.open(io.BytesIO(b64decode(encoded))).convert("RGB")
    plain = PILImage.open(IMAGE).convert("RGB")
    scale = drawn.width / WIDTH
    x, y = (SPHERE[0] + SPHERE[2]) // 2, SPHERE[3] - 4  # inside the sphere's mask, below its label
    tinted = drawn.getpixel((int(x * scale), int(y * scale)))
    assert max(abs(a - b) for a, b in zip(tinted, plain.getpixel((x, y)))) > 30  # the mask is tinted
