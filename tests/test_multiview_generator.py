"""The multi-view generator: determinism, the room, the camera path and what each frame shows."""

import hashlib
import json
import math

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from omni3d_bench.generator import generate_benchmark  # noqa: E402
from omni3d_bench.generator.multiview_questions import allocentric_direction  # noqa: E402


def digest(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def scenes(root):
    return [json.loads(p.read_text()) for p in sorted((root / "scenes").glob("*.json"))]


def questions(root):
    return json.loads((root / "questions" / "test.json").read_text())["questions"]


def test_same_seed_gives_byte_identical_frames(tmp_path):
    generate_benchmark(tmp_path / "a", 1, seed=9, views=3)
    generate_benchmark(tmp_path / "b", 1, seed=9, views=3)
    files = digest(tmp_path / "a")
    assert files == digest(tmp_path / "b")
    assert len(files) == 4 * 3 + 1 + 2  # 3 frames x (image, depth, mask, annotation), scene, json
    assert json.loads((tmp_path / "a" / "benchmark.json").read_text())["views"] == 3


def test_every_frame_has_its_own_camera_and_files(multiview_bench):
    for scene in scenes(multiview_bench):
        assert len(scene["frames"]) == 4
        positions = [tuple(f["camera"]["position"]) for f in scene["frames"]]
        assert len(set(positions)) == 4  # the camera moves
        room = scene["room"]
        for f in scene["frames"]:
            x, y, z = f["camera"]["position"]
            assert abs(x) < room["width"] / 2 and abs(y) < room["length"] / 2 and 0 < z < room["height"]
            frame = json.loads((multiview_bench / "annotations" / f"{f['image_id']}.json").read_text())
            assert frame["camera"] == f["camera"] and frame["scene_id"] == scene["scene_id"]
            mask = np.array(Image.open(multiview_bench / "masks" / f"{f['image_id']}.png"))
            depth = np.array(Image.open(multiview_bench / "depth" / f"{f['image_id']}.png"))
            assert mask.shape == depth.shape == (320, 480)
            assert (depth > 0).all()  # walls close the room: every pixel hits something
            for obj in frame["objects"]:
                assert (mask == obj["id"] + 1).sum() == obj["visible_pixels"] >= 30


def test_every_object_is_seen_in_some_frame_and_frames_list_it(multiview_bench):
    for scene in scenes(multiview_bench):
        listed = {}
        for f in scene["frames"]:
            frame = json.loads((multiview_bench / "annotations" / f"{f['image_id']}.json").read_text())
            for obj in frame["objects"]:
                listed.setdefault(obj["id"], []).append(f["index"])
        for obj in scene["objects"]:
            assert obj["frames"] and obj["frames"] == listed[obj["id"]]
            assert obj["first_frame"] == obj["frames"][0]


def test_every_object_of_a_question_is_visible_in_a_frame(multiview_bench):
    by_scene = {s["scene_id"]: s for s in scenes(multiview_bench)}
    for q in questions(multiview_bench):
        scene = by_scene[q["scene_id"]]
        assert q["views"] == [f["image_id"] for f in scene["frames"]] and q["image_id"] == q["views"][0]
        for oid in q["object_ids"]:
            assert scene["objects"][oid]["frames"]


def _independent_direction(stand, face, target):
    """Rotate the floor plane so the viewer faces +y; then x > 0 is right and y < 0 is behind."""
    sx, sy = stand["center_world"][:2]
    heading = math.atan2(face["center_world"][1] - sy, face["center_world"][0] - sx)
    dx, dy = target["center_world"][0] - sx, target["center_world"][1] - sy
    turn = math.pi / 2 - heading
    x = dx * math.cos(turn) - dy * math.sin(turn)
    y = dx * math.sin(turn) + dy * math.cos(turn)
    return "back" if y < 0 else ("right" if x > 0 else "left")


def test_allocentric_answers_match_an_independent_computation(multiview_bench):
    by_scene = {s["scene_id"]: s for s in scenes(multiview_bench)}
    asked = 0
    for q in questions(multiview_bench):
        if q["family"] == "rel_direction":
            objects = by_scene[q["scene_id"]]["objects"]
            stand, face, target = (objects[i] for i in q["object_ids"])
            assert q["answer"] == _independent_direction(stand, face, target)
            asked += 1
    assert asked
    at = lambda x, y: {"center_world": [x, y, 0.5]}  # noqa: E731
    assert allocentric_direction(at(0, 0), at(0, 2), at(-1, 0.5)) == "left"
    assert allocentric_direction(at(0, 0), at(0, 2), at(1, 0.5)) == "right"
    assert allocentric_direction(at(0, 0), at(0, 2), at(0.3, -2)) == "back"
    assert allocentric_direction(at(0, 0), at(0, 2), at(1, 0.05)) is None  # on the boundary


def test_room_size_answers_are_the_floor_area(multiview_bench):
    by_scene = {s["scene_id"]: s for s in scenes(multiview_bench)}
    for q in questions(multiview_bench):
        if q["family"] == "room_size":
            room = by_scene[q["scene_id"]]["room"]
            assert float(q["answer"]) == pytest.approx(room["width"] * room["length"], abs=1e-4)
