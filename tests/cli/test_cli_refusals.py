"""One exit status and one word for refused input on every command, and tables that keep their
width when the output is not a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from vadar.cli import app
from vadar.cli.errors import REFUSED
from test_cli_set import commands

runner = CliRunner()


def _arguments(path: tuple[str, ...], tmp: Path) -> list[str]:
    """What each command needs besides `--set`, so the refusal of the setting is what stops it."""
    run = tmp / "run"
    run.mkdir(exist_ok=True)
    source = tmp / "helpers.py"
    source.write_text('def _h(x):\n    """Doc."""\n    return x\n')
    return {
        ("solve",): ["--question", "How many?", "--image", str(tmp / "x.png")],
        ("rescore",): [str(run)],
        ("report",): [str(run)],
        ("library", "show"): ["_h"],
        ("library", "add"): [str(source)],
        ("library", "import"): [str(tmp / "export.json")],
        ("library", "distill"): ["--data", str(tmp)],
        ("library", "check"): ["--data", str(tmp)],
        ("library", "check-programs"): ["--data", str(tmp)],
        ("library", "track"): [str(run), "--baseline", str(run)],
    }.get(path, [])


def _taking_set() -> list[tuple[str, ...]]:
    every = commands(typer.main.get_command(app))  # type: ignore[arg-type]
    return sorted(path for path, command in every.items() if any("--set" in p.opts for p in command.params))


def test_the_commands_that_take_set_are_all_checked_here():
    assert {("llm", "bench"), ("llm", "serve"), ("eval",), ("library", "list")} <= set(_taking_set())


@pytest.mark.parametrize("path", _taking_set(), ids=" ".join)
def test_a_refused_setting_exits_2_with_one_error_line_on_every_command(tmp_path, monkeypatch, path):
    monkeypatch.setenv("VADAR_HOME", str(tmp_path / "home"))
    result = runner.invoke(app, [*path, *_arguments(path, tmp_path), "--set", "sandbox.memory_mb=-1"])
    assert result.exit_code == REFUSED == 2, result.output
    assert result.output.strip().splitlines() == [
        "Error: sandbox.memory_mb must be between 128 and 1048576 (1 TiB), got -1 (VADAR_SANDBOX_MEMORY_MB; set by "
        "--set sandbox.memory_mb)"]


def test_a_refused_flag_is_named_by_the_flag(tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_HOME", str(tmp_path / "home"))
    result = runner.invoke(app, ["eval", "--executor", "cloud"])
    assert result.exit_code == 2 and result.output.startswith("Error: ") and "--executor" in result.output


def test_library_list_into_a_file_keeps_each_row_on_one_line(tmp_path):
    db = tmp_path / "lib.sqlite"
    name = "_objects_left_of_the_reference_among_the_candidates"
    source = tmp_path / "helpers.py"
    source.write_text(f'def {name}(image, reference_box, candidate_boxes):\n    """Doc."""\n'
                      "    return candidate_boxes\n")
    assert runner.invoke(app, ["library", "add", str(source), "--db", str(db)]).exit_code == 0
    result = runner.invoke(app, ["library", "list", "--db", str(db)], env={"COLUMNS": None})
    assert result.exit_code == 0, result.output
    [row] = [line for line in result.output.splitlines() if name in line]
    assert "(image, reference_box, candidate_boxes)" in row
