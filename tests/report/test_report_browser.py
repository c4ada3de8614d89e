"""The report opened in a real browser: headless Chromium driven through Selenium (conftest.py).

It checks what a user sees: the page renders (the screenshot is not blank), the first question's
picture loads with its boxes drawn, and the filters hide and show questions.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageStat

from browser_pages import laid_out, scroll_through, wait_for
from report_helpers import FIXTURES, make_data, recorded_run, rows_of
from vadar.report.colors import PALETTE
from vadar.report.run_report import build_run_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    run_dir = recorded_run(root, data=make_data(root / "clevr"))
    return build_run_report(run_dir, root / "out", db=FIXTURES / "library.json")


def visible_questions(driver) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('article.question'))"
        ".filter(a => !a.hidden && a.offsetParent !== null).map(a => a.id);")


def has_color(picture: Image.Image, hex_color: str, tolerance: int = 60) -> bool:
    target = tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    small = picture.convert("RGB")
    return any(sum(abs(a - b) for a, b in zip(pixel, target)) <= tolerance
               for _, pixel in small.getcolors(maxcolors=small.width * small.height))


def test_report_renders_with_the_first_picture_and_its_boxes(browser, report):
    browser.get(report.path.as_uri())
    assert report.run.name in browser.title
    ids = [f"q-{row['question_id']}" for row in rows_of(report.run.path)]
    assert visible_questions(browser) == ids

    first = browser.find_element("css selector", "article.question img")
    browser.execute_script("arguments[0].scrollIntoView();", first)
    loaded = browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth;", first)
    assert loaded == 960  # the 480x320 picture, enlarged for its labels
    assert int(first.get_attribute("data-boxes")) == report.questions[0].boxes == 4
    shot = Image.open(io.BytesIO(first.screenshot_as_png))
    assert has_color(shot, PALETTE[0]) and has_color(shot, PALETTE[1])  # the first two boxes' outlines

    page = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    assert max(ImageStat.Stat(page).stddev) > 20  # not a blank page
    assert len(page.getcolors(maxcolors=1 << 20) or []) > 200
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not severe, severe


def test_filters_hide_and_show_questions(browser, report):
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(report.path.as_uri())
    views = report.questions
    counter = browser.find_element("id", "shown-count")

    browser.find_element("css selector", 'input[data-filter="outcome"][value="correct"]').click()
    not_correct = [v.anchor for v in views if v.outcome != "correct"]
    assert visible_questions(browser) == not_correct and counter.text == str(len(not_correct))

    family = views[0].family
    Select(browser.find_element("css selector", 'select[data-filter="family"]')).select_by_value(family)
    assert visible_questions(browser) == [v.anchor for v in views if v.outcome != "correct" and v.family == family]

    browser.find_element("id", "reset-filters").click()
    assert len(visible_questions(browser)) == len(views)

    browser.find_element("css selector", 'input[data-filter="text"]').send_keys("_objects_left_of")
    assert visible_questions(browser) == [v.anchor for v in views if "_objects_left_of" in str(v.program)]

    browser.find_element("id", "reset-filters").click()
    browser.find_element("css selector", 'input[data-filter="outcome"][value="correct"]').click()
    hidden = next(v.anchor for v in views if v.outcome == "correct")
    assert hidden not in visible_questions(browser)
    browser.execute_script("location.hash = arguments[0];", hidden)  # a link to a hidden question
    WebDriverWait(browser, 5).until(lambda driver: hidden in visible_questions(driver))


def test_the_page_keeps_its_height_while_pictures_load(browser, report):
    """Every picture states its size, so lazy pictures loading during a scroll move nothing."""
    browser.get(report.path.as_uri())
    sizes = browser.execute_script("return Array.from(document.images).map(i => [i.getAttribute('width'), "
                                   "i.getAttribute('height')]);")
    assert sizes and all(w and h for w, h in sizes)
    laid_out(browser)
    before = browser.execute_script("return document.documentElement.scrollHeight;")
    scroll_through(browser)
    wait_for(browser, "Array.from(document.querySelectorAll('article.question img'))"
                      ".every(i => i.complete && i.naturalWidth)")
    assert browser.execute_script("return document.documentElement.scrollHeight;") == before
