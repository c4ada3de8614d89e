"""A library build shows itself in a notebook as a page, as a Solution and an Evaluation do."""

from __future__ import annotations

import html
import re
from pathlib import Path

from vadar.agents.helper_search import SearchRecord
from vadar.app.evaluation import Build
from vadar.library.validation import ValidationRound
from vadar.runs.pipeline import BatchReport
from vadar.runs.validation import ValidationReport


def test_a_build_shows_each_batch_and_the_validation_gate_as_a_framed_page():
    batches = [BatchReport(0, ["q1", "q2"], skipped=True),
               BatchReport(1, ["q3", "q4", "q5"], proposed=["_objects_left_of", "_tallest"],
                           implemented=["_objects_left_of"], failed={"_tallest": "no sample passed <script>"},
                           attempts=7, searches={"_objects_left_of": SearchRecord("left of", samples=3, working=3,
                                                                                  passed=[3], cases=23)})]
    validation = ValidationReport(True, ["q6", "q7"], judged=2,
                                  rounds=[ValidationRound(2, 0.5, 1.0, {}, {}, retired=["_objects_left_of"]),
                                          ValidationRound(2, 1.0, 1.0, {}, {})])
    build = Build(Path("runs/build-x"), batches, functions=4, database=Path("lib.db"), validation=validation)

    framed = build._repr_html_()
    assert framed.startswith("<iframe srcdoc=") and 'title="vadar build: build-x"' in framed
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', framed).group(1))
    assert page == build.html() and page.startswith("<!DOCTYPE html>")
    assert "1 of 2 built" in page and "4 functions in lib.db" in page
    assert "built before: skipped" in page and "_objects_left_of: 1 of 3 samples passed 23 cases" in page
    assert "no sample passed &lt;script&gt;" in page and "<script>\n" not in page.split("</main>")[0]
    assert "Validation on 2 build questions" in page and "0.500" in page
    assert "vadar is at least static-api" in page
    assert repr(build).startswith("Build(runs/build-x: 1 of 2 batches built, 1 functions implemented")


def test_a_batch_shows_its_queue_and_the_coverage_after_it(tmp_path):
    from vadar.library.coverage import Coverage
    from vadar.report.build_page import build_page

    batch = BatchReport(0, ["q1", "q2"], proposed=["_count"], queued=["_object_shape"],
                        coverage=Coverage(2, 1, 0, (("relation:left", 1),)))
    html = build_page(out_dir=tmp_path, batches=[batch], functions=1, coverage=Coverage(2, 2, 0))
    assert "coverage at the end</td><td>coverage 2 of 2 build questions (100%)</td>" in html
    assert "waiting for the next batch: _object_shape" in html
    assert "coverage 1 of 2 build questions (50%); not covered: relation:left (1)" in html
