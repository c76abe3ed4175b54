"""Helpers for the browser tests: viewport widths, waiting on the page, CSS locators."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: Viewport widths (CSS pixels).
PHONE = 390
DESKTOP = 1280


def wait_for(what: Callable[[], Any], timeout: float = 15.0, message: str = "") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = what()
        except Exception as exc:  # an element not there yet, or replaced mid-read
            last = exc
        else:
            if last:
                return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting: {message} (last: {last!r})")


def by(css: str) -> tuple[str, str]:
    return ("css selector", css)


def no_sideways_scroll(browser) -> None:
    width, inner = browser.driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner, f"the page scrolls sideways at {inner}px: {width}px wide"
