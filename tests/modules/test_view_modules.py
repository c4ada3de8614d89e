"""The multi-view oracle modules against the annotations, and the gold programs of every
multi-view family through the sandbox (`vadar eval-gold` on a generated multi-view benchmark)."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from base_modules.module import ModuleError, module_stub, spec_class  # noqa: E402
from base_modules.oracle.annotations3d import annotations3d_oracle_modules  # noqa: E402
from base_modules.oracle.scene_graph import scene_graph_oracle_modules  # noqa: E402
from base_modules.view_modules import VIEW_MODULES, Objects3D  # noqa: E402
from omni3d_bench.datasets.bench import BenchDataset  # noqa: E402
from omni3d_bench.generator import generate_benchmark  # noqa: E402
from omni3d_bench.generator.view_questions import VIEW_FAMILIES  # noqa: E402
from omni3d_bench.types import question_views  # noqa: E402
from vadar.cli import app  # noqa: E402
from vadar.runs.gold_eval import evaluate_view_gold  # noqa: E402
from scripted_jobs import answer_jobs_with

SEED, SCENES, VIEWS = 2, 4, 5


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("views")
    generate_benchmark(root, SCENES, seed=SEED, views=VIEWS, per_scene=7)
    return BenchDataset(root)


@pytest.fixture(scope="module")
def modules(dataset):
    return scene_graph_oracle_modules(dataset.scene, dataset.world)


def frames_of(dataset, scene_id):
    world = dataset.world(scene_id)
    return world, [dataset.image(f["image_id"]) for f in world["frames"]]


def test_objects_3d_is_the_world_annotation_each_instance_once(dataset, modules):
    for k in range(SCENES):
        world, views = frames_of(dataset, f"scene_{k:05d}")
        found = modules.objects_3d(views, "objects")
        assert len(found) == len(world["objects"])
        expected = {tuple(o["center_world"]) for o in world["objects"]}
        assert {tuple(o["center"]) for o in found} == expected
        for obj in world["objects"]:
            hits = modules.objects_3d(views, obj["category_name"])
            same = [o for o in world["objects"] if o["category_name"] == obj["category_name"]]
            assert len(hits) == len(same)
            match = next(h for h in hits if h["center"] == obj["center_world"])
            assert match["size"] == obj["dimensions"] and match["yaw"] == obj["yaw_world"]
        first = [o["first_frame"] for o in world["objects"]]
        order = [next(o["first_frame"] for o in world["objects"] if o["center_world"] == f["center"])
                 for f in found]
        assert order == sorted(first)  # in order of first appearance


def test_camera_pose_and_room_layout_read_the_frames_and_room(dataset, modules):
    world, views = frames_of(dataset, "scene_00001")
    for frame, view in zip(world["frames"], views):
        pose = modules.camera_pose(view)
        assert pose["position"] == frame["camera"]["position"]
        w2c = np.array(pose["world_to_camera"])
        assert np.allclose(w2c[:3, :3] @ pose["position"] + w2c[:3, 3], 0, atol=1e-5)
    room = modules.room_layout(views)
    assert room == {k: world["room"][k] for k in ("width", "length", "height")}
    other = frames_of(dataset, "scene_00000")[1]
    with pytest.raises(ModuleError, match="one multi-view scene"):
        modules.room_layout([views[0], other[0]])


def test_same_object_across_follows_the_scene_ids(dataset, modules):
    loc = annotations3d_oracle_modules(dataset.scene).loc
    world, views = frames_of(dataset, "scene_00002")
    pairs = 0
    for i in range(len(views)):
        for j in range(i + 1, len(views)):
            a = dataset.scene(views[i].image_id)["objects"]
            b = dataset.scene(views[j].image_id)["objects"]
            boxes_a = {o["id"]: o["bbox2D_proj"] for o in a}
            for o in b:
                for oid, box in boxes_a.items():
                    pairs += 1
                    assert modules.same_object_across(views[i], box, views[j], o["bbox2D_proj"]) \
                        == (oid == o["id"])
    assert pairs > 10
    assert loc(views[0], "objects")  # the per-frame modules still answer each frame


def test_view_modules_render_as_api_stubs_from_their_signatures():
    for spec in VIEW_MODULES:
        stub = module_stub(spec)
        assert stub.startswith(f"def {spec.name}(") and '"""' in stub
    assert "views: list[Image], object_prompt: str" in module_stub(Objects3D)
    assert spec_class(type("Real", (Objects3D,), {"forward": lambda s, v, p: []})) is Objects3D


def test_gold_programs_score_one_on_every_family(dataset):
    questions = dataset.questions("test")
    assert all(q.multi_view and q.scene_id for q in questions)
    assert len(question_views(dataset, questions[0])) == VIEWS
    report = evaluate_view_gold(dataset, questions)
    assert report.skipped == 0 and report.count == len(questions)
    assert [o.prediction for o in report.mismatches] == []
    assert report.accuracy == 1.0
    assert {q.metadata["family"] for q in questions} == set(VIEW_FAMILIES)


def test_eval_gold_command_on_a_multi_view_benchmark(dataset):
    result = CliRunner().invoke(app, ["eval-gold", "--data", str(dataset.root)])
    assert result.exit_code == 0, result.output
    count = len(dataset.questions("test"))
    assert f"accuracy: 1.000 ({count} questions)" in result.output


def test_a_wrong_answer_is_caught(dataset):
    question = next(q for q in dataset.questions("test") if q.metadata["family"] == "room_size")
    bad = type(question)(**{**question.__dict__, "answer": str(float(question.answer) * 2)})
    assert evaluate_view_gold(dataset, [bad]).accuracy < 1.0


def test_questions_file_keeps_frames_in_order(dataset):
    raw = json.loads((dataset.root / "questions" / "test.json").read_text())["questions"]
    for item in raw:
        assert item["view_ids"] == [f"{item['scene_id']}_f{k:02d}" for k in range(VIEWS)]


def test_program_agent_gets_the_frames_and_the_multi_view_api(dataset, tmp_path):
    from omni3d_bench.datasets.view_programs import view_gold_program
    from vadar.config import VadarConfig
    from vadar.llm.doubles import ScriptedLLM
    from vadar.runs.pipeline import evaluate
    from vadar.runs.prepare import DataSelection
    from vadar.runs.session import open_session

    questions = {q.question: q for q in dataset.questions("test")}

    def reply(messages):
        question = messages[-1]["content"].removeprefix("Question: ").split("\n")[0]
        return "```python\n" + view_gold_program(questions[question]) + "```"

    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    selection = DataSelection(data=dataset.root, split="test", limit=3).prepare(config)
    assert selection.view_modules is not None
    llm = ScriptedLLM([reply] * 3)
    with open_session(config, llm=llm) as session:
        summary = evaluate(session, selection, tmp_path / "run", show_progress=False, scope="all")
    assert summary.metrics.total == 1.0
    shown = "\n".join(str(m["content"]) for m in llm.calls[0])
    assert "multi-view modules below work across frames" in shown and "def objects_3d(views: list[Image]" in shown
    # with no worked example of its own, a multi-view question gets the multi-view fixed example
    assert 'lamps = objects_3d(views, "lamp")' in shown and 'loc(image, "red cube")' not in shown
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert all(len(r["view_ids"]) == VIEWS and r["view_ids"][0] == r["image_id"] for r in rows)

    report = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--data", str(dataset.root),
                                      "--out", str(tmp_path / "html")])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "html" / "index.html").read_text()
    assert f"frame {VIEWS - 1}: {rows[0]['view_ids'][-1]}" in page
    assert len(list((tmp_path / "html" / "images").glob("*-f*.jpg"))) == len(rows) * (VIEWS - 1)


def test_a_first_frame_count_from_the_build_is_not_shown_to_a_multi_view_question(dataset, tmp_path):
    from api_store import ApiStore
    from vadar.config import VadarConfig
    from vadar.llm.doubles import ScriptedLLM
    from vadar.runs.pipeline import evaluate
    from vadar.runs.prepare import DataSelection
    from vadar.runs.session import open_session

    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.paths.home.mkdir()
    with ApiStore(config.paths.database) as store:  # right on its build question: the one mug was in frame 0
        store.record_verified_program(batch_id=None, question_id="b1", question="How many mugs are there in the room?",
                                      variant="without", code='mugs = loc(image, "mug")\nfinal_result = len(mugs)\n',
                                      answer="1", gold="1", error=None, correct=True, uses=())
    selection = DataSelection(data=dataset.root, split="test", families=("object_count",), limit=2).prepare(config)
    llm = ScriptedLLM(["```python\nfinal_result = 0\n```"] * 20)
    with open_session(config, llm=llm) as session:
        evaluate(session, selection, tmp_path / "run", method="vadar", show_progress=False, scope="all")
    count_prompts = ["\n".join(str(m["content"]) for m in call) for call in llm.calls
                     if "How many" in str(call[-1]["content"]).split("\n")[0]]
    assert count_prompts
    assert all('loc(image, "mug")' not in shown and 'objects_3d(views, "lamp")' in shown for shown in count_prompts)


def scripted_view_build(dataset, tmp_path, name, stub, implementation):
    """A three-question build of the multi-view data set: the Signature agent proposes `stub` once,
    the API agent replies `implementation`, every program is its question's gold program. Returns
    the scripted LLM, the batch reports, the recorded programs and `name`'s attempts."""
    from omni3d_bench.datasets.view_programs import view_gold_program
    from vadar.config import VadarConfig
    from vadar.llm.chat import Role
    from vadar.llm.doubles import ByRole, ScriptedLLM
    from vadar.runs.pipeline import build_api
    from vadar.runs.prepare import DataSelection
    from vadar.runs.session import open_session

    questions = {q.question: q for q in dataset.questions("test")}

    def signatures(messages):
        return stub if f"{name}(" not in messages[0]["content"] else "# no new functions"

    def program(messages):
        question = messages[-1]["content"].removeprefix("Question: ").split("\n")[0]
        return "```python\n" + view_gold_program(questions[question]) + "```"

    llm = ScriptedLLM([ByRole({Role.SIGNATURE: signatures, Role.API_IMPLEMENT: implementation},
                              default=program)] * 100)
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.library.distill = config.library.validation = False
    config.library.shape_helpers_per_batch = 0
    selection = DataSelection(data=dataset.root, split="test", limit=3).prepare(config)
    with open_session(config, llm=llm) as session:
        reports = build_api(session, selection, tmp_path / "build", batch_size=3)
        return llm, reports, session.store.verified_programs(), session.store.attempts(name)


def test_a_multi_view_build_writes_its_gate_programs_with_the_frames(dataset, tmp_path):
    stub = '```python\ndef _first_box(image: Image, prompt: str) -> BBox:\n    """The first box loc finds."""\n```'
    implementation = "```python\ndef _first_box(image, prompt):\n    return loc(image, prompt)[0]\n```"
    llm, _, recorded, _ = scripted_view_build(dataset, tmp_path, "_first_box", stub, implementation)
    gate = [call for call in llm.calls if str(call[-1]["content"]).startswith("Question: ")]
    assert gate and all("def objects_3d(views: list[Image]" in call[0]["content"] for call in gate)
    # the gold programs read every frame, and the gate ran them so: right, not a NameError on `views`
    assert recorded and all(p.error is None and p.correct for p in recorded if p.variant == "with")


def test_a_multi_view_build_can_implement_a_helper_that_reads_every_frame(dataset, tmp_path):
    """The Signature and API agents of a batch about several frames see `views` and the multi-view
    modules, and a helper taking the frames is tested on them (before: one frame, no `views`)."""
    from vadar.llm.chat import Role

    stub = ('```python\ndef _count_in_room(views: list[Image], description: str) -> int:\n'
            '    """How many objects matching `description` the room holds, across every frame."""\n```')
    implementation = ("```python\ndef _count_in_room(views: list[Image], description: str) -> int:\n"
                      "    return len(objects_3d(views, description))\n```")
    llm, reports, _, attempts = scripted_view_build(dataset, tmp_path, "_count_in_room", stub, implementation)
    assert reports[0].implemented == ["_count_in_room"] and reports[0].failed == {}
    for role in (Role.SIGNATURE, Role.API_IMPLEMENT):
        assert all("def objects_3d(views: list[Image]" in call[0]["content"] for call in llm.calls_of(role))
    assert attempts and attempts[-1].error is None and "_count_in_room(views, " in (attempts[-1].test_call or "")


def test_direct_method_reads_the_world_annotation_of_a_multi_view_scene(dataset, tmp_path):
    """With oracle perception, `direct` sees every object of the scene (not one frame's) and the room."""
    from vadar.config import VadarConfig
    from vadar.llm.doubles import ScriptedLLM
    from vadar.runs.pipeline import evaluate
    from vadar.runs.prepare import DataSelection
    from vadar.runs.session import open_session

    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    selection = DataSelection(data=dataset.root, split="test", limit=1).prepare(config)
    question = dataset.questions("test")[0]
    world = dataset.world(question.scene_id)
    llm = ScriptedLLM(["<answer>2</answer>"])
    with open_session(config, llm=llm) as session:
        evaluate(session, selection, tmp_path / "run", show_progress=False, scope="all", method="direct")
    system = llm.calls[0][0]["content"]
    assert f'"width": {round(world["room"]["width"], 3)}' in system
    object_lines = [line for line in system.splitlines() if line.startswith("object ")]
    assert len(object_lines) == len(world["objects"])
    assert all('"first_frame"' in line and "bbox3D_world" not in line for line in object_lines)


def test_solve_finds_the_scene_graph_of_generated_frames(dataset, tmp_path, monkeypatch):
    """`vadar solve` on the frames of a generated multi-view scene answers with the oracle modules and
    its scene graph: found beside frames left in images/, or from --scene for copies elsewhere (where
    the hint without it leads); frames of several scenes are refused in one line."""
    import shutil

    from omni3d_bench.datasets.view_programs import view_gold_program
    from vadar.llm.doubles import ScriptedLLM

    question = next(q for q in dataset.questions("test") if q.metadata["family"] == "object_count")
    llm = ScriptedLLM([f"```python\n{view_gold_program(question)}```"] * 3)
    answer_jobs_with(monkeypatch, llm, tmp_path / "home")

    def solve(*args):
        return CliRunner().invoke(app, ["solve", *args, "--question", question.question])

    frames = [arg for path in question.view_paths for arg in ("--image", str(path))]
    in_place = solve(*frames)
    assert in_place.exit_code == 0, in_place.output
    assert f"answer: {question.answer}" in in_place.output and "same_object_across(views[0], [" in in_place.output
    copies = tmp_path / "frames"
    copies.mkdir()
    for path in question.view_paths:
        shutil.copy(path, copies / path.name)
    hint = solve("--video", str(copies))
    assert hint.exit_code == 2 and "--scene BENCH/scenes/<scene_id>.json" in hint.output
    scene = dataset.root / "scenes" / f"{question.scene_id}.json"
    copied = solve("--video", str(copies), "--scene", str(scene))
    assert copied.exit_code == 0 and f"answer: {question.answer}" in copied.output, copied.output
    other = next(p for p in (dataset.root / "images").iterdir() if not p.name.startswith(question.scene_id))
    shutil.copy(other, copies / other.name)
    assert f"not a frame of {question.scene_id}" in solve("--video", str(copies), "--scene", str(scene)).output
    mixed = solve("--video", str(dataset.root / "images"))
    assert mixed.exit_code == 2 and f"the frames show {SCENES} scenes" in mixed.output
