"""The pictures of a question page in headless Chromium: boxes on the frame their call named, in
the colour of the call's row, labels that never cover their own box, frames that open large."""

from __future__ import annotations

import io

import pytest
from PIL import Image as PILImage, ImageDraw

from base_modules.types import Image
from browser_pages import laid_out, wait_for
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.step_loop import LLMCost
from vadar.report import write_question_page
from vadar.sandbox import HostCall

pytestmark = pytest.mark.browser

SIZE = (480, 320)
POSE = {"position": [2.2, 1.6, 1.4], "world_to_camera": [[-0.8, 0.6, 0.0, 0.9], [0.2, 0.2, -1.0, 0.6],
                                                         [-0.6, -0.8, -0.3, 2.9], [0.0, 0.0, 0.0, 1.0]]}


def frames(root, count: int = 3) -> list[tuple[str, Image]]:
    """`count` frames of one scene: grey pictures with a dark shape where the boxes below lie."""
    out = []
    for k in range(count):
        path = root / f"frame{k}.png"
        picture = PILImage.new("RGB", SIZE, (200, 200, 200))
        ImageDraw.Draw(picture).rectangle((60 + 40 * k, 80, 140 + 40 * k, 200), fill=(70, 70, 70))
        picture.save(path)
        out.append((f"{k:03d}_frame{k}", Image(f"{k:03d}_frame{k}", str(path), *SIZE)))
    return out


def page_of(tmp_path, calls, views, question="How many cubes?"):
    outcome = ProgramOutcome(answer=2, program="final_result = 2\n", cost=LLMCost(1, 100, 10), seconds=1.0,
                             calls=calls)
    return write_question_page(tmp_path / "page.html", question=question, image=tmp_path / "frame0.png",
                               outcome=outcome, frames=[(frame_id, view.path) for frame_id, view in views])


def stage_boxes(driver, frame: int) -> list[dict]:
    """The overlaid boxes of one frame: colour, and place in pixels relative to that frame's picture."""
    return driver.execute_script("""
        const fig = document.querySelector('figure.pic[data-frame="' + arguments[0] + '"]');
        const stage = fig.querySelector('.stage').getBoundingClientRect();
        return Array.from(fig.querySelectorAll('.box')).map(b => {
            const r = b.getBoundingClientRect();
            return {color: b.dataset.color, x0: (r.left - stage.left) / stage.width, y0: (r.top - stage.top) / stage.height,
                    x1: (r.right - stage.left) / stage.width, y1: (r.bottom - stage.top) / stage.height};
        });""", frame)


def call_rows(driver) -> list[dict]:
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('tr.call')).map(row => ({
            name: row.cells[1].textContent.trim(), frames: row.querySelector('td.frame').textContent.trim(),
            arguments: row.querySelector('td.args').textContent, result: row.querySelector('td.result').textContent,
            colors: Array.from(row.querySelectorAll('.swatch')).map(s => s.dataset.color)}));""")


def test_each_box_is_drawn_on_its_own_frame_in_the_colour_of_its_call(browser, tmp_path):
    views = frames(tmp_path)
    (_, v0), (_, v1), (_, v2) = views
    first, second, third = [60.0, 80.0, 140.0, 200.0], [200.0, 60.0, 260.0, 120.0], [140.0, 80.0, 220.0, 200.0]
    calls = [HostCall("loc", [v0, "cube"], {}, [first, second]),
             HostCall("loc", [v2, "cube"], {}, [third]),
             HostCall("same_object_across", [v0, first, v2, third], {}, True),
             HostCall("camera_pose", [v1], {}, POSE),
             HostCall("depth", [v2, third], {}, 3.2)]
    page = page_of(tmp_path, calls, views)
    browser.get(page.as_uri())
    laid_out(browser)
    rows = call_rows(browser)
    assert [r["frames"] for r in rows] == ["0", "2", "0, 2", "1", "2"]
    pose = rows[3]
    assert pose["arguments"] == "views[1]" and "4×4 matrix" in pose["result"] and "box" not in pose["result"]
    assert rows[2]["arguments"].startswith("views[0], [60.0, 80.0, 140.0, 200.0], views[2]")
    expected = {0: [first, second], 2: [third], 1: []}
    for frame, boxes in expected.items():
        drawn = stage_boxes(browser, frame)
        assert len(drawn) == len(boxes)
        for box, seen in zip(boxes, drawn):
            place = (box[0] / SIZE[0], box[1] / SIZE[1], box[2] / SIZE[0], box[3] / SIZE[1])
            assert seen["x0"] == pytest.approx(place[0], abs=0.01) and seen["y1"] == pytest.approx(place[3], abs=0.01)
    # each call's swatches are the colours of the boxes on the frames that call names, and no other frame's
    colors = {frame: {b["color"] for b in stage_boxes(browser, frame)} for frame in expected}
    for row in rows:
        named = {int(f) for f in row["frames"].split(", ")}
        assert set(row["colors"]) <= set().union(*(colors[f] for f in named)), row
    same = rows[2]["colors"]
    assert len(same) == 2 and same[0] in colors[0] and same[1] in colors[2] and same[1] not in colors[0]
    assert rows[0]["colors"][0] == same[0] and rows[1]["colors"] == [same[1]] == rows[4]["colors"]
    # the JPEG of frame 2 has the box outlined in that colour too, at its left edge
    shot = PILImage.open(io.BytesIO(browser.find_element("css selector", 'figure.pic[data-frame="2"] .stage')
                                    .screenshot_as_png)).convert("RGB")
    target = tuple(int(same[1][i:i + 2], 16) for i in (1, 3, 5))
    edge = shot.getpixel((round(third[0] / SIZE[0] * shot.width) + 1, round(shot.height * 140 / SIZE[1])))
    assert sum(abs(a - b) for a, b in zip(edge, target)) < 90, (edge, target)


def test_fourteen_boxes_over_eight_frames_have_fourteen_colours_matching_their_swatches(browser, tmp_path):
    """A counting question over 8 frames with 14 boxes: no frame repeats another's colours, and
    each call's swatches are its boxes' colours, in order, on the frame it looked at."""
    views = frames(tmp_path, count=8)
    calls = []
    for k, (_, view) in enumerate(views):
        found = [[60.0 + 40 * k, 80.0, 100.0 + 40 * k, 140.0], [60.0 + 40 * k, 150.0, 100.0 + 40 * k, 200.0]]
        calls.append(HostCall("loc", [view, "cube"], {}, found[:2 if k < 6 else 1]))
    page = page_of(tmp_path, calls, views, question="How many cubes are there in the scene?")
    browser.get(page.as_uri())
    laid_out(browser)
    drawn = {frame: [box["color"] for box in stage_boxes(browser, frame)] for frame in range(8)}
    every = [color for colors in drawn.values() for color in colors]
    assert len(every) == 14 and len(set(every)) == 14, drawn
    rows = call_rows(browser)
    assert [row["frames"] for row in rows] == [str(k) for k in range(8)]
    for k, row in enumerate(rows):
        assert row["colors"] == drawn[k], (k, row)


def test_a_frame_opens_large_on_click(browser, tmp_path):
    views = frames(tmp_path)
    page = page_of(tmp_path, [HostCall("loc", [views[1][1], "cube"], {}, [[100.0, 80.0, 180.0, 200.0]])], views)
    browser.get(page.as_uri())
    laid_out(browser)
    thumb = browser.find_element("css selector", 'figure.pic[data-frame="1"] .stage')
    small = thumb.size["width"]
    label = browser.find_element("css selector", 'figure.pic[data-frame="1"] li.label')
    assert float(label.value_of_css_property("font-size").removesuffix("px")) >= 12
    thumb.click()
    wait_for(browser, "document.querySelector('dialog.zoom[open] figure.pic[data-laid-out]') !== null")
    large = browser.find_element("css selector", "dialog.zoom .stage").size["width"]
    assert large >= 2 * small
    browser.find_element("css selector", "dialog.zoom").click()
    wait_for(browser, "document.querySelector('dialog.zoom[open]') === null")


def test_an_enlarged_picture_shows_every_label_line_and_captions_line_up(browser, tmp_path):
    """A box touched by five calls lists five lines when opened large (none "+2 more"); a frame
    whose labels all sit on the picture keeps no margin under it, so its caption is level with
    the caption of a frame without boxes beside it."""
    views = frames(tmp_path, count=2)
    v0 = views[0][1]
    box = [60.0, 80.0, 140.0, 200.0]
    calls = [HostCall("loc", [v0, "cube"], {}, [box])]
    calls += [HostCall(name, [v0, box], {}, value) for name, value in
              (("depth", 3.2), ("get_2D_object_size", [80.0, 120.0]), ("vqa", "red"), ("same_object", True))]
    page = page_of(tmp_path, calls, views)
    browser.get(page.as_uri())
    laid_out(browser)
    lines = browser.execute_script("""
        const li = document.querySelector('figure.pic[data-frame="0"] li.label');
        return {count: li.querySelectorAll('span').length, title: li.title, more: li.dataset.more,
                listed: document.querySelectorAll('figure.pic[data-frame="0"] ol.labels li').length};""")
    assert lines["count"] == 5 and lines["more"] == "+4" and "more" not in lines["title"], lines
    assert lines["listed"] == 0  # set on the picture
    captions = browser.execute_script("return Array.from(document.querySelectorAll('figure.pic figcaption'))"
                                      ".map(c => c.getBoundingClientRect().top);")
    assert len(captions) == 2 and captions[0] == pytest.approx(captions[1], abs=0.5), captions

    browser.find_element("css selector", 'figure.pic[data-frame="0"] .stage').click()
    wait_for(browser, "document.querySelector('dialog.zoom[open] figure.pic[data-laid-out]') !== null")
    shown = browser.execute_script("""
        const li = document.querySelector('dialog.zoom li.label');
        return Array.from(li.querySelectorAll('span')).filter(s => s.offsetHeight > 0).map(s => s.textContent);""")
    assert len(shown) == 5 and not any("more" in line for line in shown), shown
    assert shown[0].startswith("loc(") and any(line.startswith("vqa") for line in shown)
    browser.find_element("css selector", "dialog.zoom").click()
    wait_for(browser, "document.querySelector('dialog.zoom[open]') === null")


def test_no_label_covers_its_own_box_on_a_crowded_picture(browser, tmp_path):
    """Sixteen small boxes side by side, each with long labels: every label set on the picture stays
    off its own box and off every other label; any that find no place stay listed under it."""
    path = tmp_path / "crowded.png"
    PILImage.new("RGB", SIZE, (190, 190, 190)).save(path)
    image = Image("crowded", str(path), *SIZE)
    boxes = [[40.0 + 50 * (k % 8), 110.0 + 60 * (k // 8), 70.0 + 50 * (k % 8), 140.0 + 60 * (k // 8)] for k in range(16)]
    calls = [HostCall("loc", [image, "small object"], {}, boxes)]
    calls += [HostCall("depth", [image, box], {}, 3.0 + k / 10) for k, box in enumerate(boxes)]
    calls += [HostCall("get_2D_object_size", [image, box], {}, [30.0, 30.0]) for box in boxes]
    outcome = ProgramOutcome(answer=16, program="final_result = 16\n", calls=calls)
    page = write_question_page(tmp_path / "crowded.html", question="How many?", image=path, outcome=outcome)
    for width in (1280, 800):
        browser.set_window_size(width, 1200)
        browser.get(page.as_uri())
        laid_out(browser)
        found = browser.execute_script("""
            const fig = document.querySelector('figure.pic');
            const rect = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
            const placed = Array.from(fig.querySelectorAll('.marks li.label')).map(li =>
                ({label: rect(li), box: rect(fig.querySelector('.box[data-mark="' + li.dataset.mark + '"]'))}));
            return {placed: placed, listed: fig.querySelectorAll('ol.labels li.label').length,
                    stage: rect(fig.querySelector('.stage'))};""")
        placed = found["placed"]
        assert len(placed) + found["listed"] == 16 and len(placed) >= 8, found

        def overlap(a, b):
            return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5

        for k, item in enumerate(placed):
            assert not overlap(item["label"], item["box"]), (k, item)
            stage = found["stage"]
            assert stage[0] - 0.5 <= item["label"][0] and item["label"][2] <= stage[2] + 0.5
            assert not any(overlap(item["label"], other["label"]) for other in placed[k + 1:])
    browser.set_window_size(1280, 1600)
