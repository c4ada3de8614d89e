"""Multi-view benchmark: determinism, the single-view output unchanged, the camera path's
coverage, and question answers re-derived independently from the world annotation."""

import hashlib
import json
import math

import numpy as np
import pytest

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from omni3d_bench.generator import generate_benchmark  # noqa: E402

SEED, SCENES, VIEWS = 5, 2, 4
SINGLE_VIEW_LAYOUT_SHA = "56d88192ec3147d48ee3a2f4ab808e70ba38a9b3722c8a2de63ac8173531e924"
"""`layout_sha` of `generate_benchmark(root, 2, seed=11)` before multi-view scenes existed."""
RENDER_FIELDS = {"bbox2D_visible", "visible_pixels"}  # counted from the rendered masks


def tree_sha(root):
    """Every file, pixels included: equal for two runs on one machine."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def layout_sha(root):
    """What the generator decides (scenes, cameras, objects, questions, answers), without the
    rendered pixels and the counts taken from them: the renderer's last bits differ between CPUs
    (the same code gave other PNG bytes on an AVX-512 machine), the generator's decisions do not."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in RENDER_FIELDS}
        return [strip(v) for v in value] if isinstance(value, list) else value

    h = hashlib.sha256()
    for p in sorted(root.rglob("*.json")):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(json.dumps(strip(json.loads(p.read_text())), sort_keys=True).encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("views")
    generate_benchmark(root, SCENES, seed=SEED, views=VIEWS)
    return root


def load(path):
    return json.loads(path.read_text())


def test_same_seed_gives_byte_identical_views(bench, tmp_path):
    generate_benchmark(tmp_path / "again", SCENES, seed=SEED, views=VIEWS)
    assert tree_sha(tmp_path / "again") == tree_sha(bench)
    assert len(list((bench / "images").glob("*.png"))) == SCENES * VIEWS
    assert load(bench / "benchmark.json")["views"] == VIEWS


def test_one_view_keeps_the_single_image_benchmark_byte_for_byte(tmp_path):
    generate_benchmark(tmp_path / "one", 2, seed=11, views=1)
    generate_benchmark(tmp_path / "default", 2, seed=11)
    assert layout_sha(tmp_path / "one") == SINGLE_VIEW_LAYOUT_SHA
    assert tree_sha(tmp_path / "one") == tree_sha(tmp_path / "default")
    assert not (tmp_path / "one" / "scenes").exists()


def test_every_object_shows_in_some_frame_and_frames_agree_with_the_scene(bench):
    for path in sorted((bench / "scenes").glob("*.json")):
        scene = load(path)
        assert len(scene["frames"]) == VIEWS and scene["room"]["area"] > 20
        listed = {f["frame"]: {o["id"] for o in load(bench / "annotations" /
                                                      f"{f['image_id']}.json")["objects"]}
                  for f in scene["frames"]}
        for obj in scene["objects"]:
            assert obj["frames"] and obj["first_frame"] == obj["frames"][0]
            assert {f for f, ids in listed.items() if obj["id"] in ids} == set(obj["frames"])
            half = np.array([scene["room"]["width"], scene["room"]["length"]]) / 2
            assert np.all(np.abs(obj["center_world"][:2]) < half)
        cameras = [np.array(f["camera"]["position"]) for f in scene["frames"]]
        assert len({tuple(c.round(3)) for c in cameras}) == VIEWS  # the camera moves
        for c in cameras:  # inside the room, above the floor
            assert abs(c[0]) < scene["room"]["width"] / 2 and abs(c[1]) < scene["room"]["length"] / 2
            assert 0 < c[2] < scene["room"]["height"]


def test_question_objects_are_visible_in_at_least_one_frame(bench):
    questions = load(bench / "questions" / "test.json")["questions"]
    assert questions and all(len(q["view_ids"]) == VIEWS for q in questions)
    for q in questions:
        assert q["image_id"] == q["view_ids"][0]
        seen = set()
        for view in q["view_ids"]:
            seen |= {o["id"] for o in load(bench / "annotations" / f"{view}.json")["objects"]}
        assert set(q["object_ids"]) <= seen


def allocentric(x, y, z):
    """Independent: rotate the floor so that facing Y is +y; left is then -x."""
    fx, fy = y[0] - x[0], y[1] - x[1]
    theta = math.atan2(fx, fy)  # rotation taking the facing direction onto +y
    vx, vy = z[0] - x[0], z[1] - x[1]
    rx = vx * math.cos(theta) - vy * math.sin(theta)
    ry = vx * math.sin(theta) + vy * math.cos(theta)
    bearing = math.degrees(math.atan2(rx, ry))  # 0 ahead, +90 right, -90 left
    return "behind" if abs(bearing) > 135 else ("right" if bearing > 0 else "left")


def test_allocentric_direction_matches_an_independent_computation():
    from omni3d_bench.generator.view_questions import direction

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(2000):
        pts = [{"center_world": [*rng.uniform(-3, 3, 2), 0.3]} for _ in range(3)]
        got = direction(*pts)
        if got is not None:
            checked += 1
            assert got == allocentric(*(p["center_world"] for p in pts))
    assert checked > 1000
    at = {"center_world": [0, 0, 0]}
    facing_north = {"center_world": [0, 1, 0]}
    assert direction(at, facing_north, {"center_world": [-1, 0.2, 0]}) == "left"
    assert direction(at, facing_north, {"center_world": [1, 0.2, 0]}) == "right"
    assert direction(at, facing_north, {"center_world": [0.1, -1, 0]}) == "behind"


def test_view_question_answers_follow_from_the_world_annotation(bench):
    questions = load(bench / "questions" / "test.json")["questions"]
    checked = {"room_size", "object_size", "relative_direction"}
    # each family is re-derived below: one missing from the benchmark would pass unchecked
    assert checked <= {q["family"] for q in questions}
    for q in questions:
        scene = load(bench / "scenes" / f"{q['scene_id']}.json")
        objs = {o["id"]: o for o in scene["objects"]}
        if q["family"] == "room_size":
            assert float(q["answer"]) == pytest.approx(scene["room"]["width"] * scene["room"]["length"], abs=1e-4)
        if q["family"] == "object_size":
            assert float(q["answer"]) == pytest.approx(max(objs[q["object_ids"][0]]["dimensions"]), abs=1e-4)
        if q["family"] == "relative_direction":
            x, y, z = (objs[i]["center_world"] for i in q["object_ids"])
            assert q["answer"] == allocentric(x, y, z)
