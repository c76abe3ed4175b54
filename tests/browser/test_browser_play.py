"""Playing on the game page in a real browser (docs/API.md "Pages, for people"):
a person signs up in the page and, with the key never typed again, plays
against a level-1 house bot by clicking only (at random, with a seed, among the
controls the page offers: ``support.play_pages``) a whole game of Nauticus and of
Waters of Nereus, seeing the result (Nautilus Industries:
test_browser_play_nautilus_industries.py); the same seat in two tabs; a refused
move's message; a Nauticus turn with the keyboard alone; the game page at 360 px.
The service runs as ``make run`` serves it (gunicorn, the projection worker,
``make bots`` and the bot worker), so the bots' moves arrive by themselves,
through the seat's stream.  Screenshots of a game being played go to docs/img/
with ``make screenshots``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.browser import DESKTOP, by, no_sideways_scroll, wait_for
from support.live import live_service
from support.play_pages import (
    CONFLICT_LINE,
    REFUSED_LINE,
    WHOLE_GAME_SECONDS,
    play_a_whole_game,
    play_bot,
    seat_page,
)


@pytest.fixture(scope="module")
def site(settings) -> Iterator[str]:
    """The service as ``make run`` starts it, house bots and their worker included."""
    with live_service(settings, bots=True) as url:
        yield url


#: The games played to their end in this file (Nautilus Industries, the longest, has a file of its
#: own, test_browser_play_nautilus_industries.py, so the suite's workers share the load).
WHOLE_GAMES = ["nauticus", "waters-of-nereus"]


@pytest.mark.timeout(WHOLE_GAME_SECONDS + 120)
@pytest.mark.parametrize("game", WHOLE_GAMES)
def test_a_person_plays_a_whole_game_against_a_house_bot_by_clicking(browser, person, game):
    play_a_whole_game(browser, person, game)


def _post(base: str, gid: str, key: str, intent: dict[str, Any], version: int | None = None) -> requests.Response:
    body: dict[str, Any] = {"intent": intent}
    if version is not None:
        body["expected_version"] = version
    return requests.post(
        f"{base}/v1/games/{gid}/intents", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=10
    )


def _wait_my_turn(browser) -> None:
    wait_for(lambda: browser.driver.find_elements(*by("[data-role=your-turn]")), 30, "the person's turn")


def _offline(d, offline: bool) -> None:
    """Cut this tab off the network (its stream too), or put it back."""
    d.execute_cdp_cmd("Network.enable", {})
    d.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )


def _make_a_move(d) -> str:
    """Click through the panel's steps to a move (the first offered each time); its words."""
    for _ in range(10):
        moves = d.find_elements(*by("#actions button[data-intent]"))
        if moves:
            text = moves[0].text
            moves[0].click()
            return text
        d.find_element(*by("#actions button[data-choice]")).click()
    raise AssertionError("the steps led to no move")


def test_two_tabs_of_one_seat_one_move_wins_and_the_other_shows_the_new_board(browser, person, shots):
    d = browser.driver
    # The tab cut off the network logs its failed requests; the 409 is the answer looked for.
    browser.expected += [CONFLICT_LINE, "net::ERR_INTERNET_DISCONNECTED"]
    gid = play_bot(browser, "nautilus-industries")
    seat_page(browser)
    _wait_my_turn(browser)
    # The panel and the highlighted board as a person first sees them (the README's picture).
    browser.screenshot(shots / "play-actions.png", DESKTOP)
    first = d.current_window_handle
    version = int(d.find_element(*by("#play-data")).get_attribute("data-version"))
    d.switch_to.new_window("tab")
    second = d.current_window_handle
    # The key is kept for this tab only (sessionStorage): the second tab signs in with it.
    browser.open("/account")
    form = wait_for(lambda: d.find_element(*by("form[data-action=sign-in]")), message="the sign-in form")
    form.find_element(*by("input[name=key]")).send_keys(person["key"])
    form.find_element(*by("button[type=submit]")).click()
    wait_for(lambda: d.execute_script("return sessionStorage.getItem('qd-key') || localStorage.getItem('qd-key')"))
    browser.open(f"/games/{gid}")
    seat_page(browser)
    _wait_my_turn(browser)
    assert int(d.find_element(*by("#play-data")).get_attribute("data-version")) == version
    # The first tab is away for a moment (its stream too), so it still shows the old board ...
    d.switch_to.window(first)
    _offline(d, True)
    # ... while the second tab moves.
    d.switch_to.window(second)
    _make_a_move(d)
    wait_for(lambda: "Done:" in d.find_element(*by("#play-status")).text, message="the second tab's move")
    # Back on the network, the first tab plays from its old board: the server refuses it (409),
    # the page says so in words and shows the new board, and the person's choice is not lost.
    d.switch_to.window(first)
    assert int(d.find_element(*by("#board-body")).get_attribute("data-version")) == version
    _offline(d, False)
    _make_a_move(d)
    message = wait_for(
        lambda: (t := d.find_element(*by("#play-status")).text) and "Sending" not in t and t,
        message="the answer in words",
    )
    assert "up to date" in message, message
    wait_for(
        lambda: int(d.find_element(*by("#board-body")).get_attribute("data-version")) > version,
        message="the new board in the first tab",
    )
    assert d.find_element(*by("h1")).text == "Nautilus Industries"  # no error page
    assert d.find_element(*by("#game")).get_attribute("data-status") in ("active", "finished")
    d.switch_to.window(second)
    d.close()
    d.switch_to.window(first)


def test_an_illegal_move_shows_the_rules_message(browser, person):
    d = browser.driver
    browser.expected.append(REFUSED_LINE)
    gid = play_bot(browser, "nauticus")
    seat_page(browser)
    _wait_my_turn(browser)
    # A move the rules refuse (a ship that does not exist), clicked as the panel's buttons are.
    d.execute_script(
        """const b = document.createElement('button'); b.type = 'button';
           b.setAttribute('data-intent', JSON.stringify({type: 'deliver_goods', ship: 7}));
           b.textContent = 'deliver from ship 8'; document.querySelector('#actions-body').append(b);
           b.click();"""
    )
    text = wait_for(
        lambda: (t := d.find_element(*by("#play-status")).text) and "Sending" not in t and t,
        message="the refusal",
    )
    # The page shows the API's own sentence for that refusal.
    version = int(d.find_element(*by("#play-data")).get_attribute("data-version"))
    refused = _post(browser.base, gid, person["key"], {"type": "deliver_goods", "ship": 7}, version)
    assert refused.status_code == 422
    assert text == refused.json()["error"]["message"], text
    assert d.find_element(*by("#game")).get_attribute("data-status") == "active"
    assert gid in d.current_url


def test_a_nauticus_turn_with_the_keyboard_alone_and_the_page_at_360px(browser, person, shots):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    d = browser.driver
    gid = play_bot(browser, "nauticus")
    seat_page(browser)
    _wait_my_turn(browser)
    board = d.find_element(*by("#board"))
    assert board.find_elements(*by(".playable[data-target][tabindex='0'][aria-label]")), "nothing playable on the board"
    browser.screenshot(shots / "play-nauticus.png", DESKTOP)
    start_version = int(d.find_element(*by("#play-data")).get_attribute("data-version"))
    keys = ActionChains(d)

    def focused() -> Any:
        return d.switch_to.active_element

    # From the top of the page, Tab to the first move of the panel.
    d.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    for _ in range(80):
        keys.send_keys(Keys.TAB).perform()
        el = focused()
        if el.get_attribute("data-intent") or el.get_attribute("data-choice"):
            break
    else:
        raise AssertionError("Tab never reached a move")
    # The person takes the first move offered each time, and ends the turn as soon as the panel
    # offers it: Tab to it, Enter.
    ended = False
    for _ in range(80):
        if ended or not d.find_elements(*by("[data-role=your-turn]")):
            break
        el = focused()
        intent = json.loads(el.get_attribute("data-intent") or "null")
        can_end = d.find_elements(*by("#actions button[data-intent*='\"end_turn\"']"))
        if not (intent or el.get_attribute("data-choice")) or (can_end and (intent or {}).get("type") != "end_turn"):
            keys.send_keys(Keys.TAB).perform()  # on to the next move (or to "End the turn")
            continue
        assert el.accessible_name, "a move without an accessible name"
        keys.send_keys(Keys.ENTER).perform()
        wait_for(lambda: d.find_element(*by("#actions")).get_attribute("aria-busy") == "false", message="the post")
        ended = (intent or {}).get("type") == "end_turn"
        time.sleep(0.2)
    else:
        raise AssertionError("the turn did not end with Tab and Enter")
    assert ended or not d.find_elements(*by("[data-role=your-turn]"))
    assert int(d.find_element(*by("#board-body")).get_attribute("data-version")) > start_version
    assert gid in d.current_url
    # At 360 px the game page does not scroll sideways.
    browser.size(360)
    try:
        time.sleep(0.3)
        no_sideways_scroll(browser)
        browser.screenshot(shots / "play-phone.png", 360)
    finally:
        browser.size(DESKTOP)
