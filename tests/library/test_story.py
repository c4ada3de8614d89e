"""A helper's way into the library, told from its decisions: `vadar library show` and the report."""

from __future__ import annotations

from typer.testing import CliRunner

from api_store import ApiStore
from vadar.cli import app
from vadar.library.story import helper_story
from vadar.report.library import functions_from_export

SEARCH = {"claim": "relation:left", "samples": 3, "working": 3, "passed": [3], "pass_rate": 0.3333, "cases": 12,
          "rounds": 1, "closest_failures": ["CLEVR_1: _objects_left_of(image, box of red cube #0): missing [...]"]}
ADMITTED = {"origin": "proposal", "questions": 10, "used_by": ["3", "7"], "right_with": 2, "right_without": 1,
            "truth_check": {"passed": True, "claim": "relation:left", "cases": 12, "failures": []}}
VALIDATED = {"questions": 20, "vadar": 11, "static": 9, "tally": {"wins": 2, "losses": 0, "questions": ["81", "90"]}}


def store_with_history(path) -> ApiStore:
    store = ApiStore(path)
    store.propose("_objects_left_of", "(image: Image, bbox: BBox) -> list[BBox]", "Objects left of bbox.")
    store.implement("_objects_left_of", "def _objects_left_of(image, bbox):\n    return []\n")
    for kind, mode, evidence in (("searched", "search", SEARCH), ("admitted", "labelled", ADMITTED),
                                 ("validated", "validation", VALIDATED)):
        store.record_decision("_objects_left_of", kind, mode=mode, evidence=evidence)
    return store


def test_the_story_names_route_search_checks_outcomes_and_validation():
    decisions = [{"decision": "searched", "version": 2, "evidence": SEARCH},
                 {"decision": "admitted", "version": 2, "mode": "labelled", "evidence": ADMITTED},
                 {"decision": "validated", "version": 2, "evidence": VALIDATED}]
    lines = helper_story("_objects_left_of", decisions).lines
    assert lines[0] == ("v2 searched: claim relation:left: sample 3 of 3 passed (3 ran, pass rate 0.33), "
                        "12 ground-truth cases, 1 round")
    assert lines[1] == "v2 admitted (labelled)"
    assert "proposed by the Signature agent" in lines[2] and "passed on 12 cases" in lines[3]
    assert lines[4] == "    programs using it right 2 times, 1 without it (2 used it)"
    assert lines[5].startswith("v2 validated: won 2, lost 0 on the 2 build questions that used it")
    confirmed = {k: v for k, v in ADMITTED.items() if k != "right_without"}  # ground truth: none written without it
    lines = helper_story("_objects_left_of", [{"decision": "admitted", "version": 2, "evidence": confirmed}]).lines
    assert lines[-1] == "    programs using it right 2 times, none written without it (2 used it)"


def test_a_failed_search_names_its_closest_failure():
    failed = {**SEARCH, "passed": [], "pass_rate": 0.0, "samples": 16, "rounds": 2}
    line = helper_story("_h", [{"decision": "searched", "version": 1, "evidence": failed}]).lines[0]
    assert "none of 16 samples passed" in line and "closest failure: CLEVR_1" in line


def test_library_show_tells_the_story(tmp_path):
    store_with_history(tmp_path / "lib.sqlite").close()
    result = CliRunner().invoke(app, ["library", "show", "_objects_left_of", "--db", str(tmp_path / "lib.sqlite")])
    assert result.exit_code == 0, result.output
    assert "how it got here:" in result.output and "sample 3 of 3 passed" in result.output
    assert "won 2, lost 0" in result.output


def test_the_report_library_section_tells_the_story(tmp_path):
    with store_with_history(tmp_path / "lib.sqlite") as store:
        export = store.export()
    function, = functions_from_export(export["functions"], export["decisions"])
    assert function.story[0].endswith("12 ground-truth cases, 1 round") and len(function.story) == 6
