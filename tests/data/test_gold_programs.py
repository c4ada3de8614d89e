"""Gold CLEVR programs expressed with the five modules: each function on a tiny scene, the real
dev split, and the `vadar eval-gold` command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from base_modules.oracle.clevr import clevr_oracle_modules
from base_modules.oracle.clevr_synthetic import camera_pose, synthetic_scene
from base_modules.types import Image
from omni3d_bench.datasets import clevr_programs
from vadar.cli import app
from omni3d_bench.datasets.clevr_module_world import run_gold_program
from omni3d_bench.datasets.clevr_programs import ProgramError

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
needs_data = pytest.mark.skipif(not (DATA / "questions" / "dev.json").is_file(),
                                reason="CLEVR data not present")

ROT, _ = camera_pose()
RIGHT = np.array(ROT[0][:2]) / np.linalg.norm(ROT[0][:2])
BEHIND = np.array(ROT[2][:2]) / np.linalg.norm(ROT[2][:2])


def obj(color, size, material, shape, right, behind):
    x, y = right * RIGHT + behind * BEHIND
    return dict(color=color, size=size, material=material, shape=shape, x=x, y=y)


# Left to right: cylinder, cube, gray sphere, blue sphere. Front to back: blue sphere, cube,
# cylinder, gray sphere.
SCENE = synthetic_scene([
    obj("red", "large", "metal", "cube", 0.0, 0.0),
    obj("blue", "small", "rubber", "sphere", 2.0, -1.5),
    obj("red", "small", "rubber", "cylinder", -2.5, 1.5),
    obj("gray", "large", "metal", "sphere", 1.5, 2.5),
], "tiny.png")
IMAGE = Image("tiny", "tiny.png", 480, 320)
MODULES = clevr_oracle_modules({"tiny": SCENE}.get).as_namespace()


class Program:
    """Builds CLEVR programs: `add` appends a linear chain and returns its last index."""

    def __init__(self) -> None:
        self.nodes: list[dict] = []

    def add(self, *steps, start: list[int] | None = None) -> int:
        inputs = start
        for step in steps:
            fn, *values = step if isinstance(step, tuple) else (step,)
            self.nodes.append({"function": fn, "inputs": [] if inputs is None else inputs,
                               "value_inputs": list(values)})
            inputs = [len(self.nodes) - 1]
        return len(self.nodes) - 1

    def join(self, fn: str, a: int, b: int, *tail) -> int:
        return self.add(fn, *tail, start=[a, b])


def chain(*steps) -> list[dict]:
    program = Program()
    program.add(*steps)
    return program.nodes


def answer(program: list[dict]) -> str:
    ours = run_gold_program(program, IMAGE, MODULES)
    assert ours == clevr_programs.answer(program, SCENE)  # agrees with the annotation executor
    return ours


CUBE = ("scene", ("filter_shape", "cube"), "unique")


@pytest.mark.parametrize("steps,expected", [
    (("scene", "count"), "4"),
    (("scene", ("filter_color", "red"), "count"), "2"),
    (("scene", ("filter_size", "small"), ("filter_material", "rubber"), "count"), "2"),
    (("scene", ("filter_material", "metal"), ("filter_shape", "sphere"), "count"), "1"),
    (("scene", ("filter_color", "yellow"), "exist"), "no"),
    (("scene", ("filter_shape", "cylinder"), "exist"), "yes"),
    ((*CUBE, "query_color"), "red"),
    ((*CUBE, "query_size"), "large"),
    ((*CUBE, "query_material"), "metal"),
    ((*CUBE, "query_shape"), "cube"),
    ((*CUBE, ("relate", "left"), "unique", "query_shape"), "cylinder"),
    ((*CUBE, ("relate", "right"), "count"), "2"),
    ((*CUBE, ("relate", "front"), "unique", "query_color"), "blue"),
    ((*CUBE, ("relate", "behind"), "count"), "2"),
    ((*CUBE, ("relate", "right"), ("filter_size", "large"), "unique", "query_color"), "gray"),
    ((*CUBE, "same_color", "unique", "query_shape"), "cylinder"),
    ((*CUBE, "same_size", "unique", "query_color"), "gray"),
    ((*CUBE, "same_material", "count"), "1"),
    ((*CUBE, "same_shape", "count"), "0"),
    (("scene", ("filter_color", "blue"), "unique", "same_shape", "unique", "query_size"), "large"),
])
def test_linear_programs(steps, expected):
    assert answer(chain(*steps)) == expected


def two_branch(fn: str, left: tuple, right: tuple, *tail) -> list[dict]:
    program = Program()
    a, b = program.add(*left), program.add(*right)
    program.join(fn, a, b, *tail)
    return program.nodes


RED = ("scene", ("filter_color", "red"))
METAL = ("scene", ("filter_material", "metal"))
CYLINDER = ("scene", ("filter_shape", "cylinder"), "unique")


@pytest.mark.parametrize("program,expected", [
    (two_branch("union", RED, METAL, "count"), "3"),
    (two_branch("intersect", RED, METAL, "unique", "query_shape"), "cube"),
    (two_branch("intersect", RED, ("scene", ("filter_size", "small")), "count"), "1"),
    (two_branch("equal_color", (*CUBE, "query_color"), (*CYLINDER, "query_color")), "yes"),
    (two_branch("equal_shape", (*CUBE, "query_shape"), (*CYLINDER, "query_shape")), "no"),
    (two_branch("equal_size", (*CUBE, "query_size"), (*CYLINDER, "query_size")), "no"),
    (two_branch("equal_material", (*CUBE, "query_material"), (*CYLINDER, "query_material")),
     "no"),
    (two_branch("equal_integer", (*RED, "count"), (*METAL, "count")), "yes"),
    (two_branch("less_than", ("scene", ("filter_shape", "cube"), "count"), (*RED, "count")),
     "yes"),
    (two_branch("greater_than", ("scene", ("filter_shape", "cube"), "count"), (*RED, "count")),
     "no"),
])
def test_branching_programs(program, expected):
    assert answer(program) == expected


def test_unique_over_several_objects_is_a_program_error():
    with pytest.raises(ProgramError, match=r"step 2 \(unique\): expected exactly one object, got 2"):
        run_gold_program(chain(*RED, "unique", "query_shape"), IMAGE, MODULES)


def test_only_the_five_modules_are_called():
    calls: list[str] = []

    def spy(name):
        def call(*args):
            calls.append(name)
            return MODULES[name](*args)
        return call

    namespace = {name: spy(name) for name in MODULES}
    program = two_branch("union", (*CUBE, ("relate", "left")), (*METAL, ), "count")
    assert run_gold_program(program, IMAGE, namespace) == "3"
    assert set(calls) <= {"loc", "depth", "vqa", "same_object", "get_2D_object_size"}
    assert {"loc", "depth", "vqa", "same_object"} <= set(calls)


@needs_data
def test_dev_split_reproduces_gold_answers():
    from omni3d_bench.datasets.clevr import ClevrDataset
    from vadar.runs.gold_eval import evaluate_gold

    dataset = ClevrDataset(DATA)
    questions = dataset.questions("dev")
    report = evaluate_gold(dataset, questions)
    assert report.count == len(questions) == 1040
    assert report.accuracy >= 0.99, [(o.question.question_id, o.prediction)
                                     for o in report.mismatches]


@needs_data
def test_cli_last_line_is_accuracy():
    result = CliRunner().invoke(app, ["eval-gold", "--data", str(DATA), "--split", "dev",
                                      "--limit", "50", "--show-mismatches"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == "accuracy: 1.000 (50 questions)"


def test_cli_runs_builtin_sample_by_default():
    result = CliRunner().invoke(app, ["eval-gold"])
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("accuracy: 1.000 (") and last.endswith(" questions)")


def test_cli_missing_data_or_split_exits_nonzero(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(app, ["eval-gold", "--data", str(tmp_path / "nope")])
    assert missing.exit_code != 0
    assert "data directory not found" in missing.output
    (tmp_path / "questions").mkdir()
    unknown = runner.invoke(app, ["eval-gold", "--data", str(tmp_path), "--split", "xyz"])
    assert unknown.exit_code != 0
    assert "unknown split 'xyz'" in unknown.output
