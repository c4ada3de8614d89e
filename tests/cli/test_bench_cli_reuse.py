import pytest
from typer.testing import CliRunner

from vadar.cli import app

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")


def test_generate_twice_reuses_the_same_benchmark(tmp_path):
    runner = CliRunner()
    args = ["bench", "generate", "--scenes", "1", "--seed", "3", "--out", str(tmp_path / "b")]
    first = runner.invoke(app, args)
    assert first.exit_code == 0 and "wrote 1 scenes" in first.output
    stamp = (tmp_path / "b" / "questions" / "test.json").stat().st_mtime_ns
    second = runner.invoke(app, args)
    assert second.exit_code == 0 and "reusing it" in second.output
    assert (tmp_path / "b" / "questions" / "test.json").stat().st_mtime_ns == stamp
    third = runner.invoke(app, [*args[:-4], "--seed", "4", "--out", str(tmp_path / "b")])
    assert third.exit_code == 0 and "wrote 1 scenes" in third.output  # another seed regenerates


def test_generate_with_views_reports_frames_and_is_not_reused_for_another_view_count(tmp_path):
    runner = CliRunner()
    args = ["bench", "generate", "--scenes", "1", "--seed", "3", "--out", str(tmp_path / "v")]
    first = runner.invoke(app, [*args, "--views", "2"])
    assert first.exit_code == 0 and "(2 frames," in first.output and "s per frame)" in first.output
    assert len(list((tmp_path / "v" / "images").glob("scene_00000_f*.png"))) == 2
    again = runner.invoke(app, [*args, "--views", "2"])
    assert "reusing it" in again.output
    other = runner.invoke(app, [*args, "--views", "3"])
    assert other.exit_code == 0 and "(3 frames," in other.output
