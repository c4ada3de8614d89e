"""benchmarks/relation_rules.py: how often a 2D shortcut judges a relation otherwise than the scene file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import relation_rules  # noqa: E402

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"


def test_the_shortcuts_compare_box_centres_and_depths():
    boxes, depths = [[0, 0, 10, 10], [20, 0, 30, 10]], [5.0, 3.0]
    assert relation_rules.shortcut_says("left", boxes, depths, 0, 1) is True
    assert relation_rules.shortcut_says("right", boxes, depths, 0, 1) is False
    assert relation_rules.shortcut_says("front", boxes, depths, 1, 0) is True
    assert relation_rules.shortcut_says("behind", boxes, [None, 3.0], 0, 1) is None


@pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")
def test_box_centres_miss_clevr_left_only_on_some_scenes(capsys):
    pairs, wrong, scenes_wrong, scenes = relation_rules.disagreements(CLEVR_DIR, "dev", 0, 104)
    assert scenes == 13 and pairs["left"] == 434 and wrong["left"] == 0  # the build side agrees everywhere
    pairs, wrong, scenes_wrong, scenes = relation_rules.disagreements(CLEVR_DIR, "dev", 104, 200)
    assert wrong["left"] == wrong["right"] > 0 and 0 < scenes_wrong["left"] < scenes
    assert wrong["front"] == 0  # the oracle's depth orders objects as CLEVR's front/behind does
    assert relation_rules.main(["--data", str(CLEVR_DIR), "--skip", "104", "--limit", "200"]) == 0
    assert "left by box centre x: 16 of 788" in capsys.readouterr().out
