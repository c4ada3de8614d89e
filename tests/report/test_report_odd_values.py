"""A finished run whose answers or module calls hold numbers no float holds (`10**400`) still
gets its report: such a four-number list is shown as a list, never drawn as a box."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from report_helpers import make_data, recorded_run, rows_of, write_rows
from vadar.cli import app
from vadar.report.run_report import build_run_report

HUGE = 10**400
ODD = {"huge": [HUGE, 0, 0, 0], "negative-huge": [0, 0, -HUGE, 1], "nan": [0.0, float("nan"), 1.0, 2.0]}


@pytest.mark.parametrize("kind, where", [("huge", "answer"), ("huge", "argument"), ("huge", "result"),
                                         ("negative-huge", "argument"), ("nan", "result")])
def test_a_report_shows_odd_boxes_as_lists(tmp_path, where, kind):
    run_dir = recorded_run(tmp_path, data=make_data(tmp_path / "clevr"))
    rows = rows_of(run_dir)
    odd = ODD[kind]
    call = rows[0]["module_calls"][0]
    if where == "answer":
        rows[0]["answer"] = odd
    elif where == "argument":
        rows[0]["module_calls"].append({**call, "name": "depth", "args": [call["args"][0], odd], "result": 2.0})
    else:
        call["result"] = [odd, [1.0, 2.0, 3.0, 4.0]]
    write_rows(run_dir, rows)
    report = build_run_report(run_dir, tmp_path / "out")
    assert len(report.questions) == len(rows)
    page = report.path.read_text(encoding="utf-8")
    assert ("1" + "0" * 400 in page) if kind != "nan" else ("nan" in page.lower())


def test_vadar_report_on_a_huge_answer_is_written(tmp_path):
    run_dir = recorded_run(tmp_path, data=make_data(tmp_path / "clevr"))
    rows = rows_of(run_dir)
    rows[1]["answer"] = [HUGE, 0, 0, 0]
    write_rows(run_dir, rows)
    result = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "html" / "index.html").is_file()


def test_vadar_report_on_rows_without_an_id_or_a_gold_answer_is_written(tmp_path):
    """A results line with `"question_id": null` and no gold answer (an unscored question) gets
    an entry named "(no id)", drawn in the time chart in the colour of its `answered` badge."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    rows = [{"question_id": None, "question": "How many cubes?", "answer": 2, "seconds": 1.5},
            {"question_id": "7", "question": "Is it red?", "answer": "yes", "gold": "yes", "score": 1.0}]
    write_rows(run_dir, rows)
    result = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "(no id)" in page and "How many cubes?" in page and "Is it red?" in page
    assert '<article class="question answered" id="q--no-id-"' in page
    assert '<article class="question correct" id="q-7"' in page
