"""Playing a game page in a real browser by clicking only, as a person would:
at random (with a seed) among the controls the page offers — the actions
panel's buttons (``#actions button[data-intent]``, ``button[data-choice]``)
and the board's playable elements (``#board .playable[data-target]``) — until
the game ends or a step budget runs out.  The tests of the game page and of
the lobby use it (``play_randomly``)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from selenium.common.exceptions import (
    ElementClickInterceptedException,
    ElementNotInteractableException,
    JavascriptException,
    StaleElementReferenceException,
)

#: What a person may click on a game page to play (never Resign).
CONTROLS = ", ".join(
    [
        "#actions button[data-intent]:not([disabled])",
        "#actions button[data-choice]:not([disabled])",
        "#board .playable[data-target]",
    ]
)

#: Read in one round trip: the page's state and how many controls it offers (in ``CONTROLS`` order).
_LOOK = """
const root = document.getElementById('game');
const offered = Array.from(document.querySelectorAll(arguments[0])).filter(e => e.getClientRects().length);
return {status: root ? root.dataset.status : null,
        result: document.querySelector('[data-role=result]') !== null,
        busy: document.querySelector('#actions[aria-busy=true]') !== null,
        count: offered.length};
"""
#: The i-th control on offer, scrolled into view, and what kind it is.
_PICK = """
const offered = Array.from(document.querySelectorAll(arguments[0])).filter(e => e.getClientRects().length);
const el = offered[arguments[1]];
if (!el) return null;
el.scrollIntoView({block: 'center'});
return [el, el.matches('[data-intent]') ? 'intent' : el.matches('[data-choice]') ? 'choice' : 'board'];
"""


@dataclass
class PlayResult:
    """What :func:`play_randomly` did."""

    finished: bool
    clicks: int = 0
    intents: int = 0  # clicks on a button[data-intent] (each posts one intent)
    board: int = 0  # clicks on a board element
    seconds: float = 0.0


def play_randomly(driver: Any, seed: int, budget: int = 3000, timeout: float = 600.0) -> PlayResult:
    """Click among the controls the game page in ``driver`` offers (chosen with
    ``random.Random(seed)``) until ``#game[data-status=finished]`` and
    ``[data-role=result]`` show, ``budget`` clicks were made, or ``timeout``
    seconds passed.  Waits (without clicking) while the page offers nothing:
    the other seats' moves arrive by themselves."""
    rng = random.Random(seed)
    out = PlayResult(finished=False)
    started = time.monotonic()
    while out.clicks < budget and time.monotonic() - started < timeout:
        try:
            seen = driver.execute_script(_LOOK, CONTROLS)
        except JavascriptException:
            time.sleep(0.05)  # the page is being swapped
            continue
        if seen["status"] == "finished" and seen["result"]:
            out.finished = True
            break
        if seen["busy"] or not seen["count"]:
            time.sleep(0.05)
            continue
        try:
            picked = driver.execute_script(_PICK, CONTROLS, rng.randrange(seen["count"]))
            if not picked:
                continue  # the page changed between the two looks
            el, kind = picked
            el.click()
        except (
            JavascriptException,
            StaleElementReferenceException,
            ElementClickInterceptedException,
            ElementNotInteractableException,
        ):
            continue  # the board or the panel changed under the click: look again
        out.clicks += 1
        out.intents += kind == "intent"
        out.board += kind == "board"
        _settle(driver)
    out.seconds = time.monotonic() - started
    return out


def _settle(driver: Any, limit: float = 10.0) -> None:
    """Wait while a post is in flight (``#actions[aria-busy=true]``)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if not driver.execute_script("return document.querySelector('#actions[aria-busy=true]') !== null"):
                return
        except JavascriptException:
            pass
        time.sleep(0.02)
