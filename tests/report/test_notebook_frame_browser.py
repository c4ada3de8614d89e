"""The report's pages as a notebook shows them: inside `framed()`'s `<iframe srcdoc>` in an output
1,100 px wide, on a host page served over loopback http as Jupyter serves its own."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from browser_pages import laid_out, wait_for
from report_helpers import FIXTURES, make_data, recorded_run
from test_report_pictures_browser import frames

from vadar.app.display import framed
from vadar.programs.outcome import ProgramOutcome
from vadar.report.question_page import question_page
from vadar.report.run_report import run_report_page
from vadar.sandbox import HostCall

pytestmark = pytest.mark.browser

OUTPUT_WIDTH = 1100
HOST = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>host notebook</title></head>
<body style="margin: 0"><h1 id="host">a notebook</h1><div class="output" style="width: {width}px">{output}</div>
<p id="after">next cell</p></body></html>"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no line per request on the test's output
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A loopback http server over a folder; yields (folder, base address)."""
    root = tmp_path_factory.mktemp("host")
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def host(served, name: str, output: str) -> str:
    root, base = served
    (root / f"{name}.html").write_text(HOST.format(width=OUTPUT_WIDTH, output=output), encoding="utf-8")
    return f"{base}/{name}.html"


def multi_view_page(tmp_path) -> str:
    """A counting question over four frames, its calls naming frames and boxes."""
    views = frames(tmp_path, count=4)
    calls = []
    for k, (_, view) in enumerate(views):
        found = [[60.0 + 40 * k, 80.0, 100.0 + 40 * k, 140.0], [60.0 + 40 * k, 150.0, 100.0 + 40 * k, 200.0]]
        calls.append(HostCall("loc", [view, "cube"], {}, found))
        calls.append(HostCall("same_object_across", [views[0][1], [60.0, 80.0, 100.0, 140.0], view, found[0]], {},
                              k == 0))
    outcome = ProgramOutcome(answer=2, program="final_result = 2\n", calls=calls)
    return question_page(question="How many cubes are there in the scene?", image=tmp_path / "frame0.png",
                         outcome=outcome, frames=[(frame_id, view.path) for frame_id, view in views])


def into_frame(driver) -> None:
    driver.switch_to.default_content()
    driver.switch_to.frame(driver.find_element("css selector", ".output iframe"))


@pytest.fixture(scope="module")
def run_page(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("run")
    run_dir = recorded_run(root, data=make_data(root / "clevr"))
    return run_report_page(run_dir, db=FIXTURES / "library.json")


def frame_and_page_heights(driver) -> tuple[float, float]:
    """The frame's height on the host page and its page's own height."""
    driver.switch_to.default_content()
    frame = driver.execute_script("return document.querySelector('.output iframe').clientHeight;")
    into_frame(driver)
    page = driver.execute_script("return document.documentElement.getBoundingClientRect().height;")
    return frame, page


def test_the_frame_grows_to_its_page_and_the_call_table_reads_at_notebook_width(browser, served, tmp_path):
    """A multi-view page in an output 1,100 px wide: the frame is as high as its page (no box to
    scroll inside the output), and the call table takes the output's width, one line a row."""
    browser.get(host(served, "multi", framed(multi_view_page(tmp_path))))
    into_frame(browser)
    laid_out(browser)
    wait_for(browser, "Math.abs(innerHeight - document.documentElement.getBoundingClientRect().height) < 1")
    frame, page = frame_and_page_heights(browser)
    assert page > 760 and frame == pytest.approx(page, abs=1)
    table = browser.execute_script("""
        const t = document.querySelector('table.calls');
        return {width: t.getBoundingClientRect().width, args: t.querySelector('td.args').getBoundingClientRect().width,
                rows: Array.from(t.querySelectorAll('tr.call')).map(r => r.getBoundingClientRect().height),
                line: parseFloat(getComputedStyle(t.querySelector('td.args')).lineHeight)};""")
    assert table["width"] >= 0.7 * OUTPUT_WIDTH and table["args"] >= 400, table
    assert len(table["rows"]) == 8 and max(table["rows"]) < 2 * table["line"], table
    # a picture opened large opens where it was clicked, not in the middle of the grown frame
    stage = browser.find_element("css selector", 'figure.pic[data-frame="3"] .stage')
    browser.execute_script("arguments[0].scrollIntoView();", stage)
    clicked = browser.execute_script("return arguments[0].getBoundingClientRect().top + scrollY;", stage)
    stage.click()
    wait_for(browser, "document.querySelector('dialog.zoom[open] figure.pic[data-laid-out]') !== null")
    opened = browser.execute_script("return document.querySelector('dialog.zoom').getBoundingClientRect().top + scrollY;")
    assert abs(opened - clicked) < 50, (opened, clicked)


def test_the_frame_follows_its_page_when_filters_shorten_it(browser, served, run_page):
    browser.get(host(served, "run", framed(run_page, height=900)))
    into_frame(browser)
    laid_out(browser)
    wait_for(browser, "Math.abs(innerHeight - document.documentElement.getBoundingClientRect().height) < 1")
    tall, _ = frame_and_page_heights(browser)
    browser.find_element("css selector", 'input[data-filter="outcome"][value="correct"]').click()
    wait_for(browser, f"document.documentElement.getBoundingClientRect().height < {tall} - 100")
    wait_for(browser, "Math.abs(innerHeight - document.documentElement.getBoundingClientRect().height) < 1")
    short, page = frame_and_page_heights(browser)
    assert short < tall - 100 and short == pytest.approx(page, abs=1)


def test_links_inside_the_frame_stay_in_the_page(browser, served, run_page):
    """`#questions`, a question's id and a question a filter hid: each link keeps the report in
    its frame and the host page at its address, and brings its target into the reader's view."""
    from selenium.webdriver.support.ui import WebDriverWait

    address = host(served, "links", framed(run_page, height=900))
    browser.get(address)
    into_frame(browser)
    laid_out(browser)
    title = browser.title

    def in_view(target: str) -> bool:
        into_frame(browser)
        top = browser.execute_script("return document.getElementById(arguments[0]).getBoundingClientRect().top;",
                                     target)
        browser.switch_to.default_content()
        frame_top, viewport = browser.execute_script(
            "return [document.querySelector('.output iframe').getBoundingClientRect().top, innerHeight];")
        return -2 <= frame_top + top < viewport - 40

    def follow(selector: str, target: str) -> None:
        into_frame(browser)
        browser.find_element("css selector", selector).click()
        assert browser.title == title  # the report, not the host page, is in the frame
        browser.switch_to.default_content()
        assert browser.current_url == address and browser.title == "host notebook"
        WebDriverWait(browser, 10).until(lambda _: in_view(target))

    follow('header.top nav a[href="#questions"]', "questions")
    into_frame(browser)
    anchors = browser.execute_script("return Array.from(document.querySelectorAll('a.qid')).map(a => a.getAttribute('href'));")
    last = anchors[-1].lstrip("#")
    follow(f'a.qid[href="#{last}"]', last)
    follow('header.top nav a[href="#summary"]', "summary")
    # a link to a question the filters hide shows it again
    into_frame(browser)
    used_by = browser.execute_script("""
        const a = Array.from(document.querySelectorAll('section.function a[href^="#q-"]'))[0];
        return a ? a.getAttribute('href').slice(1) : null;""")
    assert used_by
    outcome = browser.execute_script("return document.getElementById(arguments[0]).dataset.outcome;", used_by)
    browser.find_element("css selector", f'input[data-filter="outcome"][value="{outcome}"]').click()
    assert browser.execute_script("return document.getElementById(arguments[0]).hidden;", used_by)
    browser.execute_script("document.querySelector('section.function a[href=\"#' + arguments[0] + '\"]')"
                           ".scrollIntoView();", used_by)
    follow(f'section.function a[href="#{used_by}"]', used_by)
    into_frame(browser)
    assert not browser.execute_script("return document.getElementById(arguments[0]).hidden;", used_by)
