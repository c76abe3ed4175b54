"""Playing a game page in a real browser by clicking only, as a person would:
at random (with a seed) among the controls the page offers — the actions
panel's buttons (``#actions button[data-intent]``, ``button[data-choice]``)
and the board's playable elements (``#board .playable[data-target]``) — until
the game ends or a step budget runs out, each control as likely as the next or,
with ``weights``, weighted by its kind.  The tests of the game
page and of the lobby use it (``play_randomly``)."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
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

#: Read in one round trip: the page's state and the kind of each control it offers (in ``CONTROLS``
#: order; see :func:`play_randomly` for the kinds).
_LOOK = """
const root = document.getElementById('game');
const offered = Array.from(document.querySelectorAll(arguments[0])).filter(e => e.getClientRects().length);
const kind = (e) => {
  if (e.matches('[data-intent]')) {
    try { return JSON.parse(e.getAttribute('data-intent')).type || 'intent'; } catch (x) { return 'intent'; }
  }
  if (e.matches('[data-choice]')) return 'group:' + (e.getAttribute('data-group') || '');
  return 'board:' + (e.getAttribute('data-target') || '').split(':')[0];
};
return {status: root ? root.dataset.status : null,
        result: document.querySelector('[data-role=result]') !== null,
        busy: document.querySelector('#actions[aria-busy=true]') !== null,
        kinds: offered.map(kind)};
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


def play_randomly(
    driver: Any,
    seed: int,
    budget: int = 3000,
    timeout: float = 600.0,
    weights: Mapping[str, float] | None = None,
    idle: float | None = None,
) -> PlayResult:
    """Click among the controls the game page in ``driver`` offers (chosen with
    ``random.Random(seed)``) until ``#game[data-status=finished]`` and
    ``[data-role=result]`` show, ``budget`` clicks were made, or ``timeout``
    seconds passed.  Waits (without clicking) while the page offers nothing:
    the other seats' moves arrive by themselves.

    Without ``weights`` every control on offer is as likely.  With them, a
    control's chance is proportional to the weight of its kind (1 for a kind not
    named): a move button's kind is its intent's ``type`` (``"hold"``), a step of a
    long group's ``"group:<legend>"`` (``"group:Switch two gems"``), a board
    element's ``"board:<target prefix>"`` (``"board:zone"``).

    ``idle``: return as well once the page, after a click, has offered nothing for
    that many seconds (the seat's turn is over): several people's pages take turns."""
    rng = random.Random(seed)
    out = PlayResult(finished=False)
    started = time.monotonic()
    idle_since: float | None = None
    while out.clicks < budget and time.monotonic() - started < timeout:
        try:
            seen = driver.execute_script(_LOOK, CONTROLS)
        except JavascriptException:
            time.sleep(0.05)  # the page is being swapped
            continue
        if seen["status"] == "finished" and seen["result"]:
            out.finished = True
            break
        kinds = seen["kinds"]
        if seen["busy"] or not kinds:
            if idle is not None and out.clicks and not seen["busy"]:
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= idle:
                    break
            time.sleep(0.05)
            continue
        idle_since = None
        if weights is None:
            index = rng.randrange(len(kinds))
        else:
            index = rng.choices(range(len(kinds)), [weights.get(k, 1.0) for k in kinds])[0]
        try:
            picked = driver.execute_script(_PICK, CONTROLS, index)
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
