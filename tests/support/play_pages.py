"""The game page played by a person in a real browser: signing up in the page, a game against
a house bot from the home page's "Play bots" form, and a whole game of it by clicking at random
with a seed among the controls the page offers (``play_helpers``).  The browser tests of the
game page use it (``tests/browser/test_browser_play*.py``)."""

from __future__ import annotations

from typing import Any

import requests

from support.browser import by, wait_for
from support.play_helpers import play_randomly

#: What Chromium logs for an intent the server answered 409 (the page shows the new board).
CONFLICT_LINE = "/intents - Failed to load resource: the server responded with a status of 409"
#: ... and for an intent the rules refused (the page shows the refusal's message).
REFUSED_LINE = "/intents - Failed to load resource: the server responded with a status of 422"

#: Seeds of the random clicks, one per game (a game's own seed is the server's secret).
SEEDS = {"nauticus": 45, "nautilus-industries": 7, "waters-of-nereus": 3}


def sign_up(browser: Any, handle: str, remember: bool = False) -> str:
    """Sign up on the account page as a new person (whoever this tab had signed in is
    forgotten); the key shown once (the browser keeps it for this tab, or on this device
    with ``remember``)."""
    d = browser.driver
    browser.open("/account")
    d.execute_script("sessionStorage.clear(); localStorage.clear();")
    browser.open("/account")
    form = wait_for(lambda: d.find_element(*by("form[data-action=sign-up]")), message="the sign-up form")
    form.find_element(*by("input[name=handle]")).send_keys(handle)
    if remember:
        form.find_element(*by("input[name=remember]")).click()
    form.find_element(*by("button[type=submit]")).click()
    return wait_for(lambda: d.find_element(*by("[data-role=new-key]")).text.strip(), message="the new key")


def play_bot(browser: Any, game: str) -> str:
    """The home page's "Play bots" form, level 1: the game's page opens; its id."""
    d = browser.driver
    browser.open("/")
    form = wait_for(lambda: d.find_element(*by("form[data-action=play-bot]")), message="the play-bot form")
    form.find_element(*by(f"select[name=game] option[value='{game}']")).click()
    for level in form.find_elements(*by("select[name=level]")):
        if level.is_displayed():
            level.find_element(*by("option[value='1']")).click()
    form.find_element(*by("button[type=submit]")).click()
    wait_for(lambda: "/games/" in d.current_url, 20, "the game's page")
    return d.current_url.split("/games/")[1].split("?")[0].split("#")[0]


def seat_page(browser: Any) -> None:
    """Wait until the page shows the viewer's seat (the script fetched it again with the key)."""
    d = browser.driver
    wait_for(lambda: d.find_element(*by("#actions")), 20, "the actions panel")
    wait_for(lambda: d.find_element(*by("#play-data")), 20, "the seat's board")


def resign_running(site: str, person: dict[str, str]) -> None:
    """Resign every game of ``person`` still running, as a person leaving a game does."""
    headers = {"Authorization": f"Bearer {person['key']}"}
    listed = requests.get(f"{site}/v1/games", params={"player": person["handle"], "status": "active"}, timeout=10)
    for game in listed.json()["games"]:
        answer = requests.post(
            f"{site}/v1/games/{game['id']}/intents", json={"intent": {"type": "resign"}}, headers=headers, timeout=10
        )
        assert answer.status_code in (201, 409, 422), answer.text  # 409/422: it ended meanwhile


#: Seconds a whole game may take (each of the person's moves waits for its projection, then for
#: the bot's).
WHOLE_GAME_SECONDS = 600
#: How the person clicks on a Nautilus Industries page (``play_randomly``'s weights: a control's
#: chance is proportional to its kind's weight, 1 for the kinds not named).  A person clicking
#: every control alike wastes actions on rearranging the board (switching gems and mining order)
#: and sells in dribs: the game ends when a stock marker reaches 24 (NIN-120), and a marker in
#: row 3 moves by the gems of its colour sold at one tile less 2 (NIN-097), so such a game against
#: the level-1 bot can run for thousands of events.  This person rarely rearranges the board
#: (1/20), likes to hold gems and to widen the warehouse (3, so sales come in bulk), and
#: takes the sub upgrade that collects one more gem (3, against 0.3 for leaving it).  Played
#: offline against the level-1 bot (``python -m scripts.click_model``: the page's panel and board
#: modelled, 30 game seeds), that halved the game (events: median 1087, at most 1638, against 2172
#: and 3676 for even clicks) and bounded it (clicks: median 413, at most 624; even: 643 and 1124).
CLICK_WEIGHTS: dict[str, dict[str, float]] = {
    "nautilus-industries": {
        "switch_gem_from": 0.05,
        "group:Switch two gems": 0.05,
        "switch_tiles": 0.05,
        "group:Switch the mining order": 0.05,
        "board:zone": 0.05,
        "hold": 3.0,
        "upgrade_warehouse": 3.0,
        "upgrade_sub": 3.0,
        "decline_upgrade": 0.3,
    }
}
#: Clicks after which a game that has not ended fails the test (NI: about 1.5 times the most seen
#: offline).
CLICK_BUDGET = {"nauticus": 3000, "nautilus-industries": 900, "waters-of-nereus": 3000}


def play_a_whole_game(browser: Any, person: dict[str, str], game: str) -> None:
    """``person`` opens a game of ``game`` against the level-1 house bot from the home page and
    plays it to its end by clicking (``play_randomly``), then sees the result."""
    d = browser.driver
    # A click can race the stream (the board moved between the click and the post): the page
    # answers that 409 by bringing the board up to date, and Chromium logs the refused request.
    browser.expected.append(CONFLICT_LINE)
    gid = play_bot(browser, game)
    seat_page(browser)
    assert person["key"] not in d.current_url
    assert person["handle"] in d.find_element(*by("#viewer-name")).text
    assert d.find_element(*by("#game")).get_attribute("data-status") == "active"
    done = play_randomly(
        d, SEEDS[game], budget=CLICK_BUDGET[game], timeout=WHOLE_GAME_SECONDS, weights=CLICK_WEIGHTS.get(game)
    )
    assert done.finished, f"the game did not end in {done.clicks} clicks ({done.seconds:.0f} s)"
    assert done.intents > 0
    result = d.find_element(*by("[data-role=result]"))
    assert person["handle"] in result.text and "Result" in result.text
    assert d.find_element(*by("#game")).get_attribute("data-status") == "finished"
    assert not d.find_elements(*by("#actions button[data-intent]"))
    print(f"{game}: {done.clicks} clicks ({done.intents} moves, {done.board} on the board) in {done.seconds:.1f} s")
    answer = requests.get(f"{browser.base}/v1/games/{gid}", timeout=10).json()
    assert answer["status"] == "finished"
