"""Headless Chromium for the report's browser tests, driven through Selenium.

Chromium comes from the Debian packages `chromium` and `chromium-driver` (`.ci/run` installs
them); without them every browser test is skipped with the reason. Each browser starts with a
fresh profile and no background traffic; the pages come from files.
"""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the 'dev' extra)")
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip("headless Chromium is not installed: apt-get install chromium chromium-driver")
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     f"--user-data-dir={profile}", "--window-size=1280,1600", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))  # no driver download
    except WebDriverException as exc:
        pytest.skip(f"headless Chromium did not start ({CHROMIUM}, {CHROMEDRIVER}): {exc.msg}")
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
