"""Every question family's answer, re-derived from the annotation JSON by independent code;
the adapter, the oracle on generated scenes, and `vadar eval` over a generated benchmark."""

import json
import math
import re

import numpy as np
import pytest

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from base_modules.oracle.annotations3d import annotations3d_oracle_modules  # noqa: E402
from omni3d_bench.datasets import BenchDataset, detect_kind, load_dataset  # noqa: E402
from omni3d_bench.generator import generate_benchmark  # noqa: E402
from omni3d_bench.generator.questions import FAMILIES  # noqa: E402

SKIP = {"camera", "object", "tallest", "closest", "largest"}
MATERIAL_WORDS = {"wooden": "wood", "metal": "metal", "plastic": "plastic"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    generate_benchmark(root, 4, seed=3, per_scene=12)
    return root


def scenes(root):
    return {p.stem: json.loads(p.read_text()) for p in (root / "annotations").glob("*.json")}


def find(objects, phrase):
    *adjectives, noun = phrase.split()
    hits = [o for o in objects if o["category_name"] == noun
            and all(o["color"] == a or o["material"] == MATERIAL_WORDS.get(a) for a in adjectives)]
    assert len(hits) == 1, phrase
    return hits[0]


def is_plural_of(word, category):
    return word in (category + "s", category + "es")


def centre(o):
    return np.mean(o["bbox3D_world"], axis=0)


def depth(o):
    return float(np.mean(o["bbox3D_cam"], axis=0)[2])


def xc(o):
    return (o["bbox2D_proj"][0] + o["bbox2D_proj"][2]) / 2


def h(o):
    return o["dimensions"][2]


def dist(a, b):
    return float(np.linalg.norm(centre(a) - centre(b)))


def recompute(text, objects):
    """The answer of a question from its text and the objects alone."""
    f = lambda p: find(objects, p)  # noqa: E731
    if m := re.fullmatch(r"How many (\w+) objects are there\?", text):
        return sum(o["color"] == m[1] for o in objects)
    if m := re.fullmatch(r"How many (\w+) (\w+) are there\?", text):
        return sum(o["material"] == MATERIAL_WORDS[m[1]] and is_plural_of(m[2], o["category_name"])
                   for o in objects)
    if m := re.fullmatch(r"How many (\w+) are there\?", text):
        return sum(is_plural_of(m[1], o["category_name"]) for o in objects)
    if m := re.fullmatch(r"How many objects are closer to the camera than the (.+)\?", text):
        return sum(depth(o) < depth(f(m[1])) for o in objects)
    if m := re.fullmatch(r"How many objects are taller than the (.+)\?", text):
        return sum(h(o) > h(f(m[1])) for o in objects)
    if m := re.fullmatch(r"What is the distance between the (.+) and the (.+) in meters\?", text):
        return dist(f(m[1]), f(m[2]))
    if m := re.fullmatch(r"How tall is the (.+) in meters\?", text):
        return h(f(m[1]))
    if m := re.fullmatch(r"How many times taller is the (.+) than the (.+)\?", text):
        return h(f(m[1])) / h(f(m[2]))
    if m := re.fullmatch(r"How much farther from the camera is the (.+) than the (.+), in "
                         r"meters\?", text):
        return depth(f(m[1])) - depth(f(m[2]))
    if m := re.fullmatch(r"How many \w+ as tall as the (.+) could be stacked on top of each other "
                         r"within the height of the (.+)\?", text):
        return math.floor(h(f(m[2])) / h(f(m[1])))
    if m := re.fullmatch(r"Is the (.+) to the left of the (.+)\?", text):
        return "yes" if xc(f(m[1])) < xc(f(m[2])) else "no"
    if m := re.fullmatch(r"Is the (.+) in front of the (.+)\?", text):
        return "yes" if depth(f(m[1])) < depth(f(m[2])) else "no"
    if m := re.fullmatch(r"Is the (.+) taller than the (.+)\?", text):
        return "yes" if h(f(m[1])) > h(f(m[2])) else "no"
    if m := re.fullmatch(r"Is the (.+) closer to the (.+) than to the (.+)\?", text):
        return "yes" if dist(f(m[1]), f(m[2])) < dist(f(m[1]), f(m[3])) else "no"
    if m := re.fullmatch(r"Which is the (.+): the (.+), the (.+), or the (.+)\?", text):
        key = {"tallest": h, "largest (by volume)": lambda o: np.prod(o["dimensions"]),
               "closest to the camera": lambda o: -depth(o)}[m[1]]
        return max(m.groups()[1:], key=lambda p: key(f(p)))
    if m := re.fullmatch(r"How tall, in meters, is the object immediately to the left of the "
                         r"(.+)\?", text):
        ref = f(m[1])
        return h(max((o for o in objects if xc(o) < xc(ref)), key=xc))
    if m := re.fullmatch(r"What color is the object closest to the (.+)\?", text):
        ref = f(m[1])
        return min((o for o in objects if o is not ref), key=lambda o: dist(ref, o))["color"]
    raise AssertionError(f"no independent rule for {text!r}")


def test_every_answer_matches_an_independent_computation(bench):
    by_image = scenes(bench)
    questions = json.loads((bench / "questions" / "test.json").read_text())["questions"]
    assert {q["family"] for q in questions} == set(FAMILIES)
    for q in questions:
        expected = recompute(q["question"], by_image[q["image_id"]]["objects"])
        if q["answer_type"] == "float":
            assert float(q["answer"]) == pytest.approx(expected, rel=1e-3), q
        else:
            assert q["answer"] == str(expected), q


def test_adapter_loads_the_benchmark_and_the_oracle_reads_it(bench):
    assert detect_kind(bench) == "bench"
    dataset = load_dataset(bench)
    assert isinstance(dataset, BenchDataset) and dataset.splits() == ["test"]
    questions = dataset.questions("test")
    modules = annotations3d_oracle_modules(dataset.scene)
    for q in questions:
        image = dataset.image(q)
        scene = dataset.scene(q.image_id)
        assert (image.width, image.height) == (scene["width"], scene["height"])
        for m in re.finditer(r"(?=\bthe ([a-z ]+?)(?: in meters|\?|,|:| than| and| could"
                             r"| taller| to the| in front| closer))", q.question):
            phrase = m[1]
            if len(phrase.split()) > 3 or set(phrase.split()) & SKIP:
                continue
            boxes = modules.loc(image, phrase)
            assert len(boxes) == 1, (phrase, q.question)
            obj = find(scene["objects"], phrase)
            assert boxes[0] == obj["bbox2D_proj"]
            assert modules.depth(image, boxes[0]) == pytest.approx(depth(obj), abs=1e-4)
            assert modules.vqa(image, "What color is this object?", boxes[0]) == obj["color"]
        assert len(modules.loc(image, "objects")) == len(scene["objects"])


def test_vadar_eval_runs_on_a_generated_benchmark(bench, tmp_path):
    from vadar.config import VadarConfig
    from vadar.llm.doubles import ScriptedLLM
    from vadar.runs.pipeline import evaluate
    from vadar.runs.prepare import DataSelection, PreparedData
    from vadar.runs.session import open_session

    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    prepared = DataSelection(data=bench).prepare()
    data = PreparedData(prepared.dataset, prepared.split, prepared.questions[:4],
                        annotations3d_oracle_modules(prepared.dataset.scene))

    def program(messages):
        question = messages[-1]["content"].removeprefix("Question: ").split("\n")[0]
        if m := re.fullmatch(r"How many (\w+) are there\?", question):
            return f"```python\nfinal_result = len(loc(image, '{m[1]}'))\n```"
        return "```python\nfinal_result = len(loc(image, 'objects'))\n```"

    with open_session(config, llm=ScriptedLLM([program] * 40)) as session:
        summary = evaluate(session, data, tmp_path / "run",
                           show_progress=False)
    assert summary.questions == 4
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text()
            .splitlines()]
    assert all(r["error"] is None or r["error"] == "" for r in rows), rows
