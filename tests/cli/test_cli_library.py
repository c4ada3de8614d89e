"""`vadar library list|show|export` against a real store file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api_store import ApiStore
from vadar.cli import app

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "lib.sqlite"
    with ApiStore(path) as store:
        run = store.start_run("eval", model="qwen")
        store.propose("_center", "(box: BBox) -> list[float]", "Centre of a box.", run_id=run.id, model="qwen")
        store.propose("_left_of", "(a: BBox, b: BBox) -> bool", "True if a is left of b.")
        store.propose("_broken", "() -> int", "Never worked.")
        store.record_attempt("_left_of", 1, error="NameError", passed=False)
        store.implement("_center", "def _center(box):\n    return [(box[0] + box[2]) / 2]\n")
        store.mark_admitted("_center")
        store.implement("_left_of", "def _left_of(a, b):\n    return _center(a) < _center(b)\n",
                        dependencies=["_center"])
        store.mark_failed("_broken", "5 attempts failed: SyntaxError")
    return path


def _run(*args: str, env: dict[str, str | None] | None = None):
    base = {"COLUMNS": "200", "VADAR_CONFIG": None, "VADAR_PATHS_DB_PATH": None}
    return runner.invoke(app, ["library", *args], env={**base, **(env or {})})


def test_list_shows_live_functions_and_hides_failed(db: Path) -> None:
    result = _run("list", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert "_center" in result.output and "_left_of" in result.output
    assert "(box: BBox) -> list[float]" in result.output  # brackets are not eaten as markup
    assert "admitted" in result.output and "candidate" in result.output  # each helper's state
    assert "_broken" not in result.output

    everything = _run("list", "--all", "--db", str(db))
    assert everything.exit_code == 0
    assert "_broken" in everything.output and "failed" in everything.output


def test_list_uses_the_configured_database_by_default(db: Path) -> None:
    result = _run("list", env={"VADAR_PATHS_DB_PATH": str(db)})
    assert result.exit_code == 0, result.output
    assert "_left_of" in result.output


def test_show_prints_code_docstring_history_and_dependencies(db: Path) -> None:
    result = _run("show", "_left_of", "--db", str(db))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "_left_of  (version 2, candidate)" in out
    assert "True if a is left of b." in out
    assert "return _center(a) < _center(b)" in out
    assert "dependencies: _center" in out and "attempts:     1" in out
    assert "v1  proposed" in out and "* v2  candidate" in out

    used = _run("show", "_center", "--db", str(db))
    assert "used by:      _left_of" in used.output and "run 1, model qwen" in used.output

    failed = _run("show", "_broken", "--db", str(db))
    assert failed.exit_code == 0
    assert "last error:   5 attempts failed: SyntaxError" in failed.output
    assert "(not implemented)" in failed.output


def test_show_unknown_name_fails_clearly_and_suggests_a_match(db: Path) -> None:
    result = _run("show", "_Left_Of_", "--db", str(db))
    assert result.exit_code == 2
    assert "no function named '_Left_Of_'" in result.output
    assert "did you mean '_left_of'?" in result.output
    assert "Traceback" not in result.output


def test_missing_or_broken_database_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "lib.sqlite"
    result = _run("list", "--db", str(missing))
    assert result.exit_code == 2
    assert f"no library database at {missing}" in result.output
    assert not missing.exists()  # a read-only command must not create it
    assert _run("list", env={"VADAR_HOME": str(tmp_path / "home")}).exit_code == 2

    junk = tmp_path / "junk.sqlite"
    junk.write_text("not sqlite at all\n" * 40)
    broken = _run("show", "_x", "--db", str(junk))
    assert broken.exit_code == 1
    assert "junk.sqlite is not a usable SQLite database" in broken.output
    assert "Traceback" not in broken.output and isinstance(broken.exception, SystemExit)


def test_export_to_stdout_and_to_a_file(db: Path, tmp_path: Path) -> None:
    result = _run("export", "--db", str(db))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [f["name"] for f in data["functions"]] == ["_center", "_left_of", "_broken"]
    assert [h["version"] for h in data["functions"][1]["history"]] == [1, 2]
    assert "programs" not in data

    out = tmp_path / "sub" / "library.json"
    written = _run("export", "--output", str(out), "--programs", "--db", str(db))
    assert written.exit_code == 0, written.output
    from_file = json.loads(out.read_text())
    assert from_file["functions"] == data["functions"] and from_file["programs"] == []


def test_an_empty_library_does_not_send_the_user_in_circles(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    ApiStore(path).close()
    plain, everything = _run("list", "--db", str(path)), _run("list", "--all", "--db", str(path))
    assert plain.exit_code == everything.exit_code == 0
    assert "--all" not in plain.output and "--all" not in everything.output
    assert "vadar library show loc" in plain.output


def test_only_failed_functions_point_at_all(tmp_path: Path) -> None:
    path = tmp_path / "failed.sqlite"
    with ApiStore(path) as store:
        store.propose("_broken", "() -> int", "Never worked.")
        store.mark_failed("_broken", "SyntaxError")
    assert "1 failed: see --all" in _run("list", "--db", str(path)).output


def test_show_describes_a_predefined_module(db: Path) -> None:
    result = _run("show", "loc", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert "predefined module" in result.output and "def loc(" in result.output
