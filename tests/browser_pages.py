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
