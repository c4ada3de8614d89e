"""Render smoke test, determinism and geometric consistency of the generated benchmark."""

import hashlib
import json

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from omni3d_bench.generator import generate_benchmark  # noqa: E402

SEED, SCENES = 11, 2


def digest(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    generate_benchmark(root, SCENES, seed=SEED)
    return root


def annotations(root):
    return [json.loads(p.read_text()) for p in sorted((root / "annotations").glob("*.json"))]


def test_same_seed_gives_byte_identical_files(bench, tmp_path):
    again = tmp_path / "again"
    generate_benchmark(again, SCENES, seed=SEED)
    assert digest(again) == digest(bench)
    assert len(digest(bench)) == 4 * SCENES + 2


def test_outputs_have_the_documented_shapes(bench):
    for ann in annotations(bench):
        rgb = np.array(Image.open(bench / "images" / ann["image_filename"]))
        assert rgb.shape == (ann["height"], ann["width"], 3) and rgb.std() > 10
        depth = np.array(Image.open(bench / "depth" / ann["depth_filename"]))
        assert depth.dtype == np.uint16 and depth.max() > 1000
        masks = np.array(Image.open(bench / "masks" / ann["mask_filename"]))
        assert set(np.unique(masks)) <= {0, *(o["mask_value"] for o in ann["objects"])}
        assert 3 <= len(ann["objects"]) <= 10


def project(K, points):
    uvw = np.asarray(points) @ np.asarray(K).T
    return uvw[:, :2] / uvw[:, 2:3]


def test_projected_3d_boxes_contain_2d_boxes_and_masks(bench):
    for ann in annotations(bench):
        K, w2c = np.array(ann["camera"]["K"]), np.array(ann["camera"]["world_to_camera"])
        masks = np.array(Image.open(bench / "masks" / ann["mask_filename"]))
        for obj in ann["objects"]:
            corners_world = np.array(obj["bbox3D_world"])
            corners_cam = corners_world @ w2c[:3, :3].T + w2c[:3, 3]
            assert np.allclose(corners_cam, obj["bbox3D_cam"], atol=1e-4)
            assert np.allclose(corners_cam.mean(axis=0), obj["center_cam"], atol=1e-4)
            uv = project(K, corners_cam)
            x0, y0, x1, y1 = obj["bbox2D_proj"]
            assert uv[:, 0].min() <= x0 + 0.5 and uv[:, 0].max() >= x1 - 0.5
            assert uv[:, 1].min() <= y0 + 0.5 and uv[:, 1].max() >= y1 - 0.5
            vx0, vy0, vx1, vy1 = obj["bbox2D_visible"]
            assert vx0 >= x0 - 1.5 and vy0 >= y0 - 1.5 and vx1 <= x1 + 1.5 and vy1 <= y1 + 1.5
            ys, xs = np.nonzero(masks == obj["mask_value"])
            assert len(xs) == obj["visible_pixels"] >= 30
            if obj["visible_pixels"] > 0.5 * (x1 - x0) * (y1 - y0):  # barely hidden: tight
                assert abs(vx0 - x0) < 3 and abs(vx1 - x1) < 3


def test_depth_map_agrees_with_the_3d_boxes(bench):
    for ann in annotations(bench):
        depth = np.array(Image.open(bench / "depth" / ann["depth_filename"])) / 1000.0
        masks = np.array(Image.open(bench / "masks" / ann["mask_filename"]))
        for obj in ann["objects"]:
            z = np.array(obj["bbox3D_cam"])[:, 2]
            seen = depth[masks == obj["mask_value"]]
            assert seen.min() >= z.min() - 0.02 and seen.max() <= z.max() + 0.02
            assert z.min() - 0.02 <= obj["depth"] <= z.max() + 0.02


def test_bench_generate_command_writes_a_loadable_benchmark(tmp_path):
    from typer.testing import CliRunner

    from omni3d_bench.datasets import load_dataset
    from vadar.cli.bench import app

    result = CliRunner().invoke(app, ["generate", "--scenes", "1", "--seed", "5",
                                      "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "wrote 1 scenes" in result.output and "families:" in result.output
    dataset = load_dataset(tmp_path / "b")
    assert dataset.questions("test") and dataset.scene("scene_00000")["objects"]
