"""`vadar bench generate` refuses bad input in one line, before anything is rendered: a negative
seed, a split that would leave --out, too many views, an --out that is a file or holds a corrupt
benchmark.json, and a full or read-only target."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vadar.cli import app

runner = CliRunner()


def generate(*args: str):
    return runner.invoke(app, ["bench", "generate", "--scenes", "1", *args], env={"COLUMNS": "200"})


@pytest.mark.parametrize("args, message", [
    (["--seed", "-1"], "--seed"),
    (["--views", "100000"], "--views"),
    (["--views", "33"], "--views"),
    (["--split", "../../x"], "a split is named with letters, digits"),
    (["--split", "a/b"], "a split is named with letters, digits"),
    (["--split", ".hidden"], "a split is named with letters, digits"),
])
def test_bad_options_are_refused_and_nothing_is_written(tmp_path: Path, args, message: str) -> None:
    out = tmp_path / "bench"
    result = generate("--out", str(out), *args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert not out.exists() and not (tmp_path / "x.json").exists()


def test_an_out_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "file"
    out.write_text("not a directory")
    result = generate("--out", str(out))
    assert result.exit_code == 2 and result.output.strip() == f"Error: --out {out} is a file; name a directory " \
        "for the benchmark"


@pytest.mark.parametrize("text", ["{bad", "\xff", '{"format": "vadar-bench", "seed": NaN'])
def test_a_corrupt_benchmark_json_is_one_line(tmp_path: Path, text: str) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    (out / "benchmark.json").write_bytes(text.encode("latin-1"))
    result = generate("--out", str(out))
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: {out / 'benchmark.json'} cannot be read") and "remove it" in line


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_full_or_read_only_target_is_one_line(tmp_path: Path, monkeypatch, code: int) -> None:
    def fail(out, *args, **kwargs):
        raise OSError(code, os.strerror(code), str(out / "images" / "s0.png"))

    monkeypatch.setattr("omni3d_bench.generator.generate_benchmark", fail)
    out = tmp_path / "bench"
    result = generate("--out", str(out))
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: cannot write {out / 'images' / 's0.png'}: {os.strerror(code)}")
