"""`vadar report` on a small recorded run: every question, boxes from the recorded calls, safe text."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import pytest
from PIL import Image
from typer.testing import CliRunner

from api_store import ApiStore
from report_helpers import FIXTURES, make_data, recorded_run, rows_of, write_rows
from vadar.cli import app
from vadar.report import ReportError, build_report
from vadar.report.calls import trace_calls
from vadar.report.colors import PALETTE
from vadar.report.run_report import build_run_report

runner = CliRunner()
LIBRARY = FIXTURES / "library.json"


@pytest.fixture
def data(tmp_path):
    return make_data(tmp_path / "clevr")


@pytest.fixture
def run_dir(tmp_path, data):
    return recorded_run(tmp_path, data=data)


def close(color: tuple[int, ...], hex_color: str, tolerance: int = 60) -> bool:
    target = tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return sum(abs(a - b) for a, b in zip(color[:3], target)) <= tolerance


def test_every_question_appears_with_its_outcome_family_and_image(run_dir, tmp_path):
    report = build_run_report(run_dir, tmp_path / "out", db=LIBRARY)
    html = report.path.read_text(encoding="utf-8")
    rows = rows_of(run_dir)
    assert [q.question_id for q in report.questions] == [r["question_id"] for r in rows]
    for row in rows:
        assert f'id="q-{row["question_id"]}"' in html
    articles = re.findall(r'<article class="question (\w+)" id="q-(\w+)"', html)
    expected = {r["question_id"]: "error" if r["error"] else ("correct" if r["correct"] else "wrong") for r in rows}
    assert dict((qid, outcome) for outcome, qid in articles) == expected
    templates = json.loads((FIXTURES / "questions.json").read_text())
    assert {q.question_id: q.family for q in report.questions} == {
        qid: info["template_filename"].removesuffix(".json") for qid, info in templates.items()}
    assert all(q.image_note is None for q in report.questions)
    for q in report.questions:
        assert (tmp_path / "out" / q.image_src).is_file()
    assert not report.problems


def test_summary_matches_the_recorded_scores(run_dir, tmp_path):
    report = build_run_report(run_dir, tmp_path / "out")
    rows = rows_of(run_dir)
    totals = dict(report.summary.totals)
    assert totals["questions"] == str(len(rows))
    assert float(totals["total (weighted by questions)"]) == pytest.approx(sum(r["score"] for r in rows) / len(rows), abs=1e-3)
    assert report.summary.outcomes == {
        "correct": sum(bool(r["correct"]) for r in rows), "wrong": sum(not r["correct"] and not r["error"] for r in rows),
        "error": sum(bool(r["error"]) for r in rows)}
    assert sum(r.count for r in report.summary.per_family) == len(rows)


def test_boxes_come_from_the_recorded_module_calls(run_dir, tmp_path):
    row = rows_of(run_dir)[0]  # four loc calls returning four distinct boxes, then same_object on two
    trace = trace_calls(row["module_calls"])
    returned = {tuple(round(v, 1) for v in box) for call in row["module_calls"] if call["name"] == "loc"
                for box in call["result"]}
    assert {mark.box for mark in trace.marks} == returned and len(returned) == 4
    first = row["module_calls"][0]
    assert trace.marks[0].labels[0] == f'loc("{first["args"][1]}")[0]'
    assert any(label.startswith("same_object = False") for mark in trace.marks for label in mark.labels)
    report = build_run_report(run_dir, tmp_path / "out")
    view = report.questions[0]
    assert view.boxes == 4 and len(view.calls) == len(row["module_calls"])
    picture = Image.open(tmp_path / "out" / view.image_src).convert("RGB")
    scale = picture.width // 480
    x0, y0, x1, y1 = (v * scale for v in first["result"][0])
    left_edge = picture.getpixel((int(x0) + 1, int((y0 + y1) / 2)))
    assert close(left_edge, PALETTE[0]), left_edge
    inside = picture.getpixel((int((x0 + x1) / 2), int(y1) - 6))
    assert close(inside, "#808080"), inside


def test_depth_and_repeated_calls_are_labelled_and_folded():
    box = [10.0, 20.0, 30.0, 40.0]
    image = {"image_id": "i", "path": "p", "width": 100, "height": 100}
    calls = [{"name": "loc", "args": [image, "cube"], "kwargs": {}, "result": [box], "error": None},
             {"name": "depth", "args": [image, box], "kwargs": {}, "result": 3.74885, "error": None},
             {"name": "depth", "args": [image, box], "kwargs": {}, "result": 3.74885, "error": None},
             {"name": "vqa", "args": [image, "What color?", box], "kwargs": {}, "result": None, "error": "boom"}]
    trace = trace_calls(calls)
    assert [c.count for c in trace.calls] == [1, 2, 1] and trace.calls[2].error == "boom"
    assert trace.marks[0].labels == ['loc("cube")[0]', "depth = 3.75", 'vqa("What color?") = error']


class Tags(HTMLParser):
    """Every element and attribute name a browser would build from the page."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self.attributes: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.names.append(tag)
        self.attributes.update(name for name, _ in attrs)


def test_every_box_of_a_question_has_its_own_colour():
    """Past the twelve palette colours no box takes an earlier box's colour, and each new colour
    is far from every earlier one and neither too pale nor too dark to outline a box."""
    boxes = [[10.0 * k, 10.0, 10.0 * k + 8, 30.0] for k in range(40)]
    trace = trace_calls([{"name": "loc", "args": [{"image_id": "a"}, "thing"], "result": boxes}])
    colors = [mark.color for mark in trace.marks]
    assert len(set(colors)) == 40 and colors[:12] == list(PALETTE)
    assert trace.calls[0].colors == colors
    rgb = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in colors]
    for k in range(12, 40):
        assert min(math.dist(rgb[k], rgb[j]) for j in range(k)) >= 50, colors[k]
        assert 50 <= 0.299 * rgb[k][0] + 0.587 * rgb[k][1] + 0.114 * rgb[k][2] <= 190, colors[k]


def test_script_in_a_question_or_program_is_shown_as_text(run_dir, tmp_path):
    rows = rows_of(run_dir)
    rows[0]["question"] = "Is the <script>alert('question')</script> cube red?"
    rows[0]["program"] = "# </pre><script>alert('program')</script>\nfinal_result = '<b>yes</b>'\n"
    rows[0]["answer"] = "<img src=x onerror=alert(1)>"
    rows[0]["step_errors"] = ["NameError: <script>alert('error')</script>"]
    write_rows(run_dir, rows)
    html = build_run_report(run_dir, tmp_path / "out").path.read_text(encoding="utf-8")
    tags = Tags()
    tags.feed(html)
    assert tags.names.count("script") == 1  # the report's own filter script
    assert "b" not in tags.names and not any(name.startswith("on") for name in tags.attributes)
    assert "&lt;script&gt;alert(&#39;question&#39;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<b>yes</b>" not in html
    assert "&lt;/pre&gt;&lt;script&gt;" in html


def test_a_missing_image_is_a_placeholder_not_a_crash(tmp_path):
    run_dir = recorded_run(tmp_path, data=tmp_path / "moved")
    report = build_run_report(run_dir, tmp_path / "out")
    assert all(q.image_note and "placeholder" in q.image_note for q in report.questions)
    assert any("not found" in p for p in report.problems)
    picture = Image.open(tmp_path / "out" / report.questions[0].image_src)
    assert picture.size == (960, 640)  # the recorded 480x320, enlarged for legible labels


def test_data_override_finds_moved_images(tmp_path, data):
    run_dir = recorded_run(tmp_path, data=tmp_path / "moved")
    report = build_run_report(run_dir, tmp_path / "out", data=data)
    assert all(q.image_note is None for q in report.questions)
    assert report.questions[0].family == "three_hop"


def test_library_from_the_database_links_functions_and_questions(run_dir, tmp_path):
    export = json.loads(LIBRARY.read_text())
    db = tmp_path / "library.db"
    with ApiStore(db) as store:
        for entry in export["functions"]:
            store.propose(entry["name"], entry["signature"], entry["docstring"])
            if entry["code"]:
                store.implement(entry["name"], entry["code"])
    report = build_run_report(run_dir, tmp_path / "out", db=db)
    names = [f.name for f in report.library.functions]
    assert names == [e["name"] for e in export["functions"]]
    used = {f.name: [qid for qid, _ in f.used_by] for f in report.library.functions}
    assert used["_objects_left_of"] == ["2", "8"]
    html = report.path.read_text(encoding="utf-8")
    assert 'id="fn-_objects_left_of"' in html and 'href="#fn-_objects_left_of"' in html
    assert 'href="#q-8"' in html


def test_no_library_database_is_a_note(run_dir, tmp_path):
    report = build_run_report(run_dir, tmp_path / "out", db=tmp_path / "absent.db")
    assert report.library.problem and "absent.db" in report.library.problem
    assert "absent.db" in report.path.read_text(encoding="utf-8")


def test_steps_shown_to_the_llm_appear(tmp_path, data):
    run_dir = recorded_run(tmp_path, "clevr-tool", data=data)
    report = build_run_report(run_dir, tmp_path / "out")
    rows = rows_of(run_dir)
    assert [len(q.step_errors) for q in report.questions] == [len(r["step_errors"]) for r in rows]
    html = report.path.read_text(encoding="utf-8")
    assert f"{len(rows[-1]['step_errors'])} errors the LLM was shown" in html


def test_ablation_output_compares_configurations(tmp_path, data):
    ablation = tmp_path / "ablation"
    ablation.mkdir()
    recorded_run(ablation, "clevr-vadar", data=data).rename(ablation / "all-oracle")
    recorded_run(ablation, "clevr-tool", data=data).rename(ablation / "real+loc=oracle")
    (ablation / "ablation.csv").write_text(
        "configuration,loc,depth,vqa,same_object,get_2D_object_size,total\n"
        "real+loc=oracle,oracle,real,real,real,real,0.1\nall-oracle,oracle,oracle,oracle,oracle,oracle,0.3\n")
    result = build_report(ablation, tmp_path / "out", db=LIBRARY)
    assert result.kind == "ablation" and result.configurations == 2 and result.questions == 6
    html = result.index.read_text(encoding="utf-8")
    assert html.index("real+loc=oracle</strong>") < html.index("all-oracle</strong>")  # the table's order
    assert (tmp_path / "out" / "all-oracle" / "index.html").is_file()
    assert 'href="all-oracle/index.html#q-2"' in html
    assert html.count('<tr data-item') == 6


def test_not_a_run_directory_is_an_error(tmp_path):
    with pytest.raises(ReportError, match="results.jsonl"):
        build_report(tmp_path)


def test_cli_writes_the_report(run_dir, tmp_path):
    out = tmp_path / "html"
    result = runner.invoke(app, ["report", str(run_dir), "--out", str(out), "--db", str(LIBRARY)])
    assert result.exit_code == 0, result.output
    assert "6 questions" in result.output and (out / "index.html").is_file()
    single = runner.invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "one"), "--single-file",
                                 "--db", str(LIBRARY)])
    assert single.exit_code == 0, single.output
    assert not (tmp_path / "one" / "images").exists()
    assert "data:image/jpeg;base64," in (tmp_path / "one" / "index.html").read_text()
    missing = runner.invoke(app, ["report", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "not a directory" in missing.output


def test_reasoning_techniques_appear_in_the_header_and_per_question(tmp_path, data):
    run_dir = recorded_run(tmp_path, data=data)
    rows = rows_of(run_dir)
    rows[0]["extra"] = {"constraint": {"reference_frame": "camera", "targets": ["red cube"], "relation": "none",
                                       "quantity": "number of red cubes", "unit": "objects", "answer_type": "count"},
                        "constraint_refused": [], "revisions": ["`final_result` is 'yes', but the answer must be a count"],
                        "samples": [{"answer": 2, "error": False}, {"answer": 2.0, "error": False},
                                    {"answer": None, "error": True}], "agreement": 1.0,
                        "unit_tests": [{"objects": [], "answer": 2}] * 2, "tests_passed": 2}
    write_rows(run_dir, rows)
    summary = json.loads((run_dir / "summary.json").read_text())
    summary.update(techniques="samples=3+formalize", mean_agreement=0.75)
    (run_dir / "summary.json").write_text(json.dumps(summary))
    report = build_run_report(run_dir, tmp_path / "out")
    assert report.questions[0].techniques == [
        "constraint: frame camera; objects red cube; relation none; number of red cubes (objects); answer count",
        "unit tests: 2 scenes written by the model; the answer's program passed 2",
        "revision asked: `final_result` is 'yes', but the answer must be a count",
        "vote of 3 programs (2, 2, error): agreement 1.00"]
    assert all(not q.techniques for q in report.questions[1:])
    html = report.path.read_text(encoding="utf-8")
    assert "samples=3+formalize (mean agreement 0.75)" in html and "vote of 3 programs" in html
