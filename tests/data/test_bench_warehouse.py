"""Warehouse scenes of the built-in benchmark: determinism, the default kind unchanged, regions that
are the objects' masks, answers re-derived independently from the annotations, and gold programs
that score 1.000 through the sandbox (`vadar eval-gold`)."""

import json

import numpy as np
import pytest
from PIL import Image as PILImage
from typer.testing import CliRunner

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from base_modules.masks import decode_rle  # noqa: E402
from omni3d_bench.datasets import BenchDataset  # noqa: E402
from omni3d_bench.generator import generate_benchmark  # noqa: E402
from omni3d_bench.generator.warehouse_questions import WAREHOUSE_FAMILIES  # noqa: E402
from test_bench_views import SINGLE_VIEW_LAYOUT_SHA, layout_sha, tree_sha  # noqa: E402
from vadar.cli import app  # noqa: E402
from vadar.runs.gold_eval import evaluate_view_gold  # noqa: E402

SEED, SCENES = 2, 2


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("warehouse")
    generate_benchmark(root, SCENES, seed=SEED, kind="warehouse")
    return root


def load(path):
    return json.loads(path.read_text())


def questions(bench):
    return load(bench / "questions" / "test.json")["questions"]


def objects(bench, question):
    annotation = load(bench / "annotations" / f"{question['image_id']}.json")
    return {o["id"]: o for o in annotation["objects"]}


def test_same_seed_gives_byte_identical_warehouse_scenes(bench, tmp_path):
    generate_benchmark(tmp_path / "again", SCENES, seed=SEED, kind="warehouse")
    assert tree_sha(tmp_path / "again") == tree_sha(bench)
    info = load(bench / "benchmark.json")
    assert info["kind"] == "warehouse" and info["scenes"] == SCENES
    assert set(info["families"]) == set(WAREHOUSE_FAMILIES)


def test_the_default_kind_keeps_its_output_byte_for_byte(tmp_path):
    generate_benchmark(tmp_path / "lib", 2, seed=11, kind="objects")
    assert layout_sha(tmp_path / "lib") == SINGLE_VIEW_LAYOUT_SHA
    result = CliRunner().invoke(app, ["bench", "generate", "--scenes", "2", "--seed", "11",
                                      "--out", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    assert tree_sha(tmp_path / "cli") == tree_sha(tmp_path / "lib")


def test_scenes_hold_every_class_with_ground_truth(bench):
    for path in sorted((bench / "annotations").glob("*.json")):
        annotation = load(path)
        cats = [o["category_name"] for o in annotation["objects"]]
        assert "buffer" in cats and cats.count("pallet") >= 3
        masks = np.array(PILImage.open(bench / "masks" / annotation["mask_filename"]))
        depth = np.array(PILImage.open(bench / "depth" / annotation["depth_filename"]))
        assert depth.dtype == np.uint16 and (depth > 0).all()  # the floor reaches every pixel
        for obj in annotation["objects"]:
            assert (masks == obj["mask_value"]).sum() == obj["visible_pixels"] >= 30
            if obj["category_name"] == "buffer":
                assert obj["dimensions"][2] < 0.01 and obj["center_world"][2] < 0.01


def test_every_region_decodes_to_its_objects_mask(bench):
    for q in questions(bench):
        masks = np.array(PILImage.open(bench / "masks" / f"{q['image_id']}.png"))
        objs = objects(bench, q)
        assert q["question"].count("<mask>") == len(q["regions"]) == len(q["object_ids"])
        for region, ident in zip(q["regions"], q["object_ids"]):
            assert region["object_id"] == ident
            mask = decode_rle(region["mask"])
            assert mask.any() and np.array_equal(mask, masks == objs[ident]["mask_value"])


def test_questions_name_regions_by_their_class(bench):
    dataset = BenchDataset(bench)
    for q, record in zip(dataset.questions("test"), questions(bench)):
        objs = objects(bench, record)
        for region, ident in zip(q.regions, record["object_ids"]):
            assert region.name.startswith(f"<{objs[ident]['category_name']}_")
            assert region.name in q.question and region.object_id == ident
        assert q.metric == ("acc@10" if record["family"] in ("region_distance", "count_in_zone") else None)


def footprint_contains(corners, point):
    """Independent inclusion test: the zone's bottom face from its 3D box corners, as two edges."""
    bottom = sorted(np.asarray(corners), key=lambda c: c[2])[:4]
    origin = bottom[0][:2]
    edges = sorted((np.asarray(c[:2]) - origin for c in bottom[1:]), key=np.linalg.norm)[:2]
    offset = np.asarray(point[:2]) - origin
    return all(0 <= offset @ e <= e @ e for e in edges)


def test_counts_and_distances_match_an_independent_computation(bench):
    seen = set()
    for q in questions(bench):
        objs = objects(bench, q)
        if q["family"] == "count_in_zone":
            zone = objs[q["object_ids"][0]]
            cls, = q["phrases"]
            inside = [footprint_contains(zone["bbox3D_world"], o["center_world"])
                      for o in objs.values() if o["category_name"] == cls]
            assert int(q["answer"]) == sum(inside)
            seen.add("count")
        if q["family"] == "region_distance":
            a, b = (np.mean(objs[i]["bbox3D_world"], axis=0) for i in q["object_ids"])
            assert float(q["answer"]) == pytest.approx(np.linalg.norm(a - b), abs=1e-3)
            seen.add("distance")
        if q["family"] in ("left_right", "left_right_yes_no"):
            xa, xb = ((objs[i]["bbox2D_proj"][0] + objs[i]["bbox2D_proj"][2]) / 2 for i in q["object_ids"])
            assert abs(xa - xb) >= 15
            if q["family"] == "left_right":
                assert q["answer"] == ("left" if xa < xb else "right")
            else:
                asked_left = q["phrases"] == ["left"]
                assert q["answer"] == ("yes" if (xa < xb) == asked_left else "no")
        if q["family"] == "mcq":
            picked = [objs[i] for i in q["object_ids"]]
            assert 3 <= len(picked) <= 4 and len({o["category_name"] for o in picked}) == 1
            which, = q["phrases"]
            keys = {"leftmost": lambda o: o["bbox2D_proj"][0] + o["bbox2D_proj"][2],
                    "rightmost": lambda o: -(o["bbox2D_proj"][0] + o["bbox2D_proj"][2]),
                    "closest": lambda o: np.linalg.norm(o["center_cam"])}[which]
            assert int(q["answer"]) == int(np.argmin([keys(o) for o in picked]))
    assert seen == {"count", "distance"}


def test_gold_programs_score_one_on_every_family(bench):
    dataset = BenchDataset(bench)
    report = evaluate_view_gold(dataset, dataset.questions("test"))
    assert report.skipped == 0 and [o.prediction for o in report.mismatches] == []
    result = CliRunner().invoke(app, ["eval-gold", "--data", str(bench)])
    assert result.exit_code == 0, result.output
    assert f"accuracy: 1.000 ({report.count} questions)" in result.output


def test_a_wrong_count_is_caught(bench):
    dataset = BenchDataset(bench)
    question = next(q for q in dataset.questions("test") if q.metadata["family"] == "count_in_zone")
    bad = type(question)(**{**question.__dict__, "answer": str(int(question.answer) + 1)})
    assert evaluate_view_gold(dataset, [bad]).accuracy == 0.0


def test_unknown_kinds_and_warehouse_views_are_refused(tmp_path):
    result = CliRunner().invoke(app, ["bench", "generate", "--kind", "shop", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown scene kind 'shop'" in result.output
    result = CliRunner().invoke(app, ["bench", "generate", "--kind", "warehouse", "--views", "3",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2 and "single images" in result.output
