"""What the browser tests wait for and read on the report's pages (the browser itself: tests/report/conftest.py)."""

from __future__ import annotations

from typing import Any


def laid_out(driver, timeout: float = 30.0) -> None:
    """Wait until the report's script has set the labels of every visible picture."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(
        "return Array.from(document.querySelectorAll('figure.pic')).filter(f => f.offsetParent !== null)"
        ".every(f => f.dataset.laidOut);"))


def wait_for(driver: Any, script: str, timeout: float = 30.0) -> None:
    """Wait until `script` (a JavaScript expression) is true on the page."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(f"return ({script});"))


SCROLL_THROUGH = """
const done = arguments[arguments.length - 1];
const painted = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
const loaded = img => img.complete ? Promise.resolve() : new Promise(r => {
  img.addEventListener("load", r, {once: true}); img.addEventListener("error", r, {once: true}); });
const inView = img => { const r = img.getBoundingClientRect();
  return img.offsetParent !== null && r.bottom >= 0 && r.top <= innerHeight; };
(async () => {
  for (let y = 0; ; y += innerHeight) {
    scrollTo(0, y);
    await painted();
    await Promise.all(Array.from(document.images).filter(inView).map(loaded));
    if (y + innerHeight >= document.documentElement.scrollHeight) { break; }
  }
  done(true);
})();
"""


def scroll_through(driver: Any, timeout: float = 30.0) -> None:
    """Scroll from top to bottom a window at a time, waiting at each stop for a painted frame and
    for the pictures in view to load.

    Lazy pictures load only once a frame is painted with them near the window: scrolls made
    faster than frames are painted (a busy machine skips frames) jump over them for good."""
    driver.set_script_timeout(timeout)
    driver.execute_async_script(SCROLL_THROUGH)
