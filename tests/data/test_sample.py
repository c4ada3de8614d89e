"""The built-in sample: regenerates identically, loads, and its gold answers follow its scenes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.datasets.clevr_programs import answer
from omni3d_bench.sample import SAMPLE_SPLIT, sample_path
from omni3d_bench.sample_builder import CX, CY, FX, FY, build, main

SAMPLE = sample_path()
COMMITTED = sorted(p.relative_to(SAMPLE) for p in SAMPLE.rglob("*")
                   if p.is_file() and p.suffix in (".json", ".png"))


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    assert main([str(out)]) == 0
    return out


def test_regenerates_identically(rebuilt: Path, tmp_path: Path) -> None:
    built = sorted(p.relative_to(rebuilt) for p in rebuilt.rglob("*") if p.is_file())
    assert built == COMMITTED
    build(tmp_path)  # two fresh builds are byte-identical, images included
    for rel in built:
        assert (tmp_path / rel).read_bytes() == (rebuilt / rel).read_bytes(), rel
    for rel in built:
        if rel.suffix == ".json":
            assert (SAMPLE / rel).read_bytes() == (rebuilt / rel).read_bytes(), rel
        else:  # PNG encoders may differ between Pillow builds; the pixels must not
            ours = np.asarray(PILImage.open(SAMPLE / rel).convert("RGB"))
            fresh = np.asarray(PILImage.open(rebuilt / rel).convert("RGB"))
            assert np.array_equal(ours, fresh), rel


def test_small() -> None:
    assert sum((SAMPLE / rel).stat().st_size for rel in COMMITTED) < 300_000


def test_loads_with_clevr_adapter() -> None:
    ds = ClevrDataset(SAMPLE)
    assert ds.splits() == [SAMPLE_SPLIT]
    questions = ds.questions(SAMPLE_SPLIT)
    assert len(questions) == 12
    assert len({q.image_id for q in questions}) == 4
    assert {q.answer_type for q in questions} == {"int", "str"}
    families = {q.metadata["template_filename"] for q in questions}
    assert len(families) == 6
    for q in questions:
        assert ds.image(q).width == 480 and ds.image(q).height == 320
        scene = ds.scene(q.image_id)
        assert scene is not None
        assert answer(q.gold_program, scene) == q.answer
    functions = {n["function"] for q in questions for n in q.gold_program}
    assert {"count", "exist", "relate", "query_color", "greater_than"} <= functions


def test_geometry_is_one_pinhole_camera() -> None:
    """pixel_coords are the projection of 3d_coords through one rigid pose with CLEVR's K."""
    ds = ClevrDataset(SAMPLE)
    world, camera = [], []
    for image_id in sorted({q.image_id for q in ds.questions(SAMPLE_SPLIT)}):
        for obj in ds.scene(image_id)["objects"]:
            u, v, z = obj["pixel_coords"]
            world.append(obj["3d_coords"])
            camera.append([(u - CX) * z / FX, (v - CY) * z / FY, z])
            assert obj["3d_coords"][2] == {"large": 0.7, "small": 0.35}[obj["size"]]
    world, camera = np.array(world), np.array(camera)
    wc, cc = world - world.mean(0), camera - camera.mean(0)
    u, _, vt = np.linalg.svd(wc.T @ cc)
    rot = vt.T @ np.diag([1, 1, np.sign(np.linalg.det(vt.T @ u.T))]) @ u.T
    residual = np.linalg.norm(wc @ rot.T - cc, axis=1).max()
    assert residual < 0.05  # pixel rounding only
    # relationships agree with the camera frame: left = smaller x, behind = larger depth
    for image_id in {q.image_id for q in ds.questions(SAMPLE_SPLIT)}:
        scene = ds.scene(image_id)
        cam = np.array([[(o["pixel_coords"][0] - CX) * o["pixel_coords"][2] / FX,
                         o["pixel_coords"][2]] for o in scene["objects"]])
        n = len(cam)
        for i in range(n):
            others = [j for j in range(n) if j != i]
            assert scene["relationships"]["left"][i] == [j for j in others if cam[j, 0] < cam[i, 0]]
            assert scene["relationships"]["right"][i] == [j for j in others if cam[j, 0] > cam[i, 0]]
            assert scene["relationships"]["behind"][i] == [j for j in others if cam[j, 1] > cam[i, 1]]
            assert scene["relationships"]["front"][i] == [j for j in others if cam[j, 1] < cam[i, 1]]


def test_auto_detected_as_clevr() -> None:
    from omni3d_bench.datasets import load_dataset

    ds = load_dataset(SAMPLE)
    assert isinstance(ds, ClevrDataset) and len(ds.questions(SAMPLE_SPLIT)) == 12
