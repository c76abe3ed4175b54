"""A real browser for the pages: the operating system's headless Chromium,
driven by Selenium through the chromedriver of the same Debian source package
(so the two always match; Selenium Manager is skipped because both paths are
given, and nothing downloads a browser).  ``make browser`` installs them.

Every test fails on any console error of the pages it opened (the
``browser`` fixture reads Chromium's log after each test).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from support import serving
from support.play_pages import resign_running, sign_up

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
#: The launch flags agreed for CI: headless, no sandbox (we run as root), and no traffic of its own.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1280,900",
]


class Browser:
    """A Chromium session, with its console log checked after every test."""

    def __init__(self, driver: Any, base: str):
        self.driver = driver
        self.base = base
        #: Console lines a test expects (the failed load of a page it asked to be a 404, say).
        self.expected: list[str] = []

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def console_errors(self) -> list[str]:
        lines = [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        return [m for m in lines if not any(x in m for x in self.expected)]

    def size(self, width: int, height: int = 900) -> None:
        """The viewport: phone widths through device emulation (a headless window has a minimum width)."""
        if width < 600:
            self.driver.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True},
            )
        else:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            self.driver.set_window_size(width, height)

    def screenshot(self, path: Path, width: int) -> None:
        """The whole page at ``width`` pixels."""
        self.size(width)
        height = int(self.driver.execute_script("return document.documentElement.scrollHeight"))
        self.size(width, min(height, 8000))
        path.parent.mkdir(parents=True, exist_ok=True)
        assert self.driver.save_screenshot(str(path)), path
        self.size(1280)


@pytest.fixture(scope="session")
def chromium() -> tuple[str, str]:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).exists() and os.access(path, os.X_OK)):
            pytest.fail(f"{path} is missing: run 'make browser' (as root it installs chromium and chromium-driver)")
    return CHROMIUM, CHROMEDRIVER


@pytest.fixture(scope="module")
def site(app) -> Iterator[str]:
    """The app on a loopback socket, with a projector beside it (as `make run` has its worker)."""
    with serving(app) as url:
        yield url


@contextmanager
def chromium_driver(chromium: tuple[str, str]) -> Iterator[Any]:
    """A headless Chromium of its own profile (its own storage: one person), its console kept."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium[0]
    profile = tempfile.mkdtemp(prefix="qd-chromium-")
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(options=options, service=Service(chromium[1]))
    drv.set_page_load_timeout(60)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def driver(chromium: tuple[str, str], site: str) -> Iterator[Any]:
    """The module's browser.  It asks for ``site`` so that it starts after the site and closes
    before it: a server told to stop waits for its open connections (a game page's stream, the
    browser's idle ones) up to its graceful timeout."""
    with chromium_driver(chromium) as drv:
        yield drv


@pytest.fixture
def browser(driver: Any, site: str) -> Iterator[Browser]:
    b = Browser(driver, site)
    b.driver.get_log("browser")  # start from a clean log
    yield b
    errors = b.console_errors()
    assert not errors, "console errors:\n" + "\n".join(errors)


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``$QD_SCREENSHOTS`` (``make screenshots``: docs/img), else a temporary folder."""
    target = os.environ.get("QD_SCREENSHOTS")
    return Path(target) if target else tmp_path_factory.mktemp("screenshots")


_PEOPLE: dict[str, dict[str, str]] = {}


@pytest.fixture
def person(browser: Browser, site: str) -> Iterator[dict[str, str]]:
    """A person signed up in the page (``support.play_pages``), once for each site: a module's
    (the key stays in the module's browser tab).  After each test the person resigns what is
    still running, as a person leaving a game does: an account holds only a few running games
    with house bots (docs/BOTS.md, "What bots cost")."""
    if site not in _PEOPLE:
        handle = f"pat{uuid.uuid4().hex[:8]}"
        key = sign_up(browser, handle)
        assert key.startswith("qd")
        _PEOPLE[site] = {"handle": handle, "key": key}
    yield _PEOPLE[site]
    resign_running(site, _PEOPLE[site])
