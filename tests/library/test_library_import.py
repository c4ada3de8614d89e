"""`vadar library import`: an export read back into an empty home gives the same functions,
versions and decisions; a helper that is not one plain `def` refuses the whole file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api_store import ApiStore
from vadar.cli import app

runner = CliRunner()
CENTER = "def _center(box):\n    return [(box[0] + box[2]) / 2]\n"
LEFT_OF = "def _left_of(a, b):\n    return _center(a)[0] < _center(b)[0]\n"


def _run(*args: str):
    return runner.invoke(app, ["library", *args],
                         env={"COLUMNS": "200", "VADAR_CONFIG": None, "VADAR_PATHS_DB_PATH": None})


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    """An export of a library with two versions of a helper, a dependency, attempts, a failed
    function and admission decisions."""
    source = tmp_path / "source.sqlite"
    with ApiStore(source) as store:
        store.propose("_center", "(box: BBox) -> list[float]", "Centre of a box.", model="qwen")
        store.record_attempt("_center", 1, code="def _center(box):\n    return box\n", error="wrong", passed=False)
        store.implement("_center", "def _center(box):\n    return box[:2]\n")
        store.record_decision("_center", "rejected", mode="outcome", evidence={"right": 1, "of": 3})
        store.implement("_center", CENTER)
        store.record_decision("_center", "admitted", mode="outcome", evidence={"right": 3, "of": 3})
        store.propose("_left_of", "(a: BBox, b: BBox) -> bool", "True if a is left of b.")
        store.implement("_left_of", LEFT_OF, dependencies=["_center"])
        store.record_decision("_left_of", "admitted", mode="hand")
        store.propose("_broken", "() -> int", "Never worked.")
        store.mark_failed("_broken", "5 attempts failed: SyntaxError")
    out = tmp_path / "export.json"
    assert _run("export", "--output", str(out), "--db", str(source)).exit_code == 0
    return out


def library_of(path: Path) -> dict:
    """What an import must keep: versions with their content and status, attempts, decisions."""
    with ApiStore(path, create=False) as store:
        data = store.export()
    keep = ("name", "version", "signature", "docstring", "code", "status", "last_error", "model", "is_current",
            "dependencies", "created_at")
    return {
        "functions": [{**{k: f[k] for k in keep},
                       "history": [{**{k: v[k] for k in keep},
                                    "attempts": [{k: a[k] for k in ("attempt", "code", "error", "passed")}
                                                 for a in v["attempts"]]} for v in f["history"]]}
                      for f in data["functions"]],
        "decisions": [{k: d[k] for k in ("name", "version", "decision", "mode", "evidence")}
                      for d in data["decisions"]],
    }


def test_an_export_imported_into_an_empty_home_gives_the_same_library(exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "home" / "library.sqlite"
    result = _run("import", str(exported), "--db", str(target))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"imported 3 functions into {target}: _center, _left_of, _broken"
    assert library_of(target) == library_of(tmp_path / "source.sqlite")
    imported = library_of(target)
    assert [v["version"] for v in imported["functions"][0]["history"]] == [1, 2, 3]
    assert imported["functions"][1]["dependencies"] == ["_center"]
    assert [d["decision"] for d in imported["decisions"]] == ["rejected", "admitted", "admitted"]


def test_the_export_of_an_import_imports_again(exported: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.sqlite", tmp_path / "second.sqlite"
    assert _run("import", str(exported), "--db", str(first)).exit_code == 0
    again = tmp_path / "again.json"
    assert _run("export", "--output", str(again), "--db", str(first)).exit_code == 0
    assert _run("import", str(again), "--db", str(second)).exit_code == 0
    assert library_of(second) == library_of(first)


BAD_HELPERS = {
    "decorated": ("def _trace(f):\n    return f\n\n@_trace\ndef _center(box):\n    return box\n",
                  "must be exactly one `def`"),
    "decorator-only": ("@print\ndef _center(box):\n    return box\n", "decorators are not allowed"),
    "call-in-default": ("def _center(box, log=print('imported')):\n    return box\n",
                        "default values must be constants"),
    "top-level-code": ("import os\ndef _center(box):\n    return box\n", "must be exactly one `def`"),
    "other-name": ("def center(box):\n    return box\n", "defines `center` instead"),
}


@pytest.mark.parametrize("kind", BAD_HELPERS)
def test_a_helper_that_is_not_one_plain_def_refuses_the_file(exported: Path, tmp_path: Path, kind: str) -> None:
    code, reason = BAD_HELPERS[kind]
    data = json.loads(exported.read_text())
    data["functions"][0]["history"][-1]["code"] = code
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    target = tmp_path / "target.sqlite"
    result = _run("import", str(bad), "--db", str(target))
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: {bad}: function _center, version 3: library function _center") and reason in line
    assert line.endswith("nothing was imported")
    with ApiStore(target) as store:
        assert store.functions(include_failed=True) == []


def test_an_existing_name_is_refused_unless_replace(exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "target.sqlite"
    with ApiStore(target) as store:
        store.propose("_center", "(box: BBox) -> BBox", "Mine.")
        store.implement("_center", "def _center(box):\n    return box\n")
    result = _run("import", str(exported), "--db", str(target))
    assert result.exit_code == 2
    assert result.output.strip() == (f"Error: {exported}: function '_center' already exists; add --replace to "
                                     "import it as a new version; nothing was imported")
    with ApiStore(target) as store:
        assert [f.name for f in store.functions(include_failed=True)] == ["_center"]
        assert store.current("_center").docstring == "Mine."

    assert _run("import", str(exported), "--replace", "--db", str(target)).exit_code == 0
    with ApiStore(target) as store:
        current = store.current("_center")
        assert (current.version, current.code) == (5, CENTER)  # after the two versions it had
        assert [v.docstring for v in store.history("_center")][:2] == ["Mine.", "Mine."]
        assert [(d.name, d.version, d.decision) for d in store.decisions("_center")] == [
            ("_center", 4, "rejected"), ("_center", 5, "admitted")]


def test_a_trivial_rename_is_refused_even_with_replace(exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "target.sqlite"
    with ApiStore(target) as store:
        store.propose("_Center", "(box: BBox) -> BBox", "Mine.")
    result = _run("import", str(exported), "--replace", "--db", str(target))
    assert result.exit_code == 2
    assert "function '_center' is a trivial rename of existing function '_Center'" in result.output


@pytest.mark.parametrize("text, message", [("not json", "is not a JSON library export"),
                                           ('{"functions": []}', "not a library export"),
                                           ('[1, 2]', "not a library export")])
def test_a_file_that_is_not_an_export_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = _run("import", str(bad), "--db", str(tmp_path / "target.sqlite"))
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert message in line


def test_with_build_the_build_runs_and_worked_examples_come_along(tmp_path: Path) -> None:
    source = tmp_path / "source.sqlite"
    with ApiStore(source) as store:
        store.propose("_center", "(box: BBox) -> list[float]", "Centre of a box.")
        store.implement("_center", CENTER)
        run = store.start_run("build-api", config={"data": "runs/bench20", "split": "test"})
        batch = store.start_batch(run.id, ["3", "4"])
        store.record_verified_program(batch_id=batch.id, question_id="3", question="Where?", variant="with",
                                      code="final_result = _center(loc(image, 'cup')[0])", answer="1", gold="1",
                                      error=None, correct=True, uses=["_center"])
        store.start_run("eval")  # an evaluation's run is the home's own: never imported
    out = tmp_path / "export.json"
    assert _run("export", "--output", str(out), "--db", str(source)).exit_code == 0

    plain, full = tmp_path / "plain.sqlite", tmp_path / "full.sqlite"
    assert _run("import", str(out), "--db", str(plain)).exit_code == 0
    result = _run("import", str(out), "--with-build", "--db", str(full))
    assert result.exit_code == 0, result.output
    with ApiStore(plain, create=False) as store:
        assert store.runs() == [] and store.verified_programs() == []
    with ApiStore(full, create=False) as store:
        assert [r.kind for r in store.runs()] == ["build-api"]
        assert store.build_question_ids(data="runs/bench20", split="test") == {"3", "4"}
        (example,) = store.verified_programs(correct_only=True)
        assert example.uses == ("_center",) and store.batches(store.runs()[0].id)[0].id == example.batch_id
