"""The pages in a real browser (headless Chromium, see conftest.py): a person
opens the home page, follows a finished game of each kind, steps through its
replay with the keyboard to the end, and opens its audit; a live board changes
when an intent is posted; a token in the address's fragment becomes the
viewer; bad ids get a clear page; no page logs a console error.  Screenshots
of each board and of the replay viewer are taken on the way (``make
screenshots`` keeps them in docs/img/ for the README)."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests
from support import finished_and_running
from support.browser import DESKTOP, PHONE, by, no_sideways_scroll, wait_for

from service.games import registry

TITLES = {"nauticus": "Nauticus", "nautilus-industries": "Nautilus Industries", "waters-of-nereus": "Waters of Nereus"}


@pytest.fixture(scope="module")
def games(app, ctx) -> dict[str, dict[str, Any]]:
    """A finished two-player game of each kind, and a running Nauticus game."""
    return finished_and_running(app, ctx, 70, "browser", "nauticus", running_seed=3, stop_after=12)


def _version(browser) -> int:
    return int(browser.driver.find_element(*by("#board-body")).get_attribute("data-version"))


def _key(browser, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    ActionChains(browser.driver).send_keys(getattr(Keys, key)).perform()


def _at(browser, n: int) -> None:
    wait_for(lambda: _version(browser) == n, message=f"the board at position {n}")
    caption = browser.driver.find_element(*by("#replay-caption")).text
    assert caption.startswith(f"After event {n}:"), caption


@pytest.mark.parametrize("game", registry.names())
def test_follow_a_finished_game_step_its_replay_to_the_end_and_audit_it(browser, games, game, shots):
    gid = games[game]["id"]
    d = browser.driver
    browser.open("/")
    assert d.find_element(*by("h1")).text == "Quarterdeck"
    wait_for(lambda: d.find_element(*by(f'a[href="/games/{gid}"]')), message="the game on the home page").click()
    wait_for(lambda: d.find_element(*by("#board-body")), message="the board")
    assert d.find_element(*by("h1")).text == TITLES[game]
    head = int(d.find_element(*by("#replay")).get_attribute("data-head"))
    assert _version(browser) == head  # a finished game opens at its end
    drawings = d.find_elements(*by("#board svg[role=img]"))
    assert len(drawings) >= 3
    for svg in drawings:  # each drawing has a title and a description (its text alternative)
        assert svg.find_element(*by("title")).get_attribute("textContent").strip()
        assert svg.find_element(*by("desc")).get_attribute("textContent").strip()
    browser.screenshot(shots / f"board-{game}.png", DESKTOP)
    browser.size(PHONE)
    no_sideways_scroll(browser)
    if game == "waters-of-nereus":
        browser.screenshot(shots / f"board-{game}-phone.png", PHONE)
    browser.size(DESKTOP)

    # The replay, with the keyboard.
    _key(browser, "HOME")
    _at(browser, 1)
    for n in (2, 3, 4):
        _key(browser, "ARROW_RIGHT")
        _at(browser, n)
    _key(browser, "ARROW_LEFT")
    _at(browser, 3)
    _key(browser, "PAGE_DOWN")
    _at(browser, 13)
    # The log follows the replay: the entry of the position is marked (its window moves with it).
    wait_for(lambda: d.find_element(*by("#e13")).get_attribute("class") == "current", message="event 13 marked")
    assert "at=13" in d.current_url  # the position is in the address, to share
    d.find_element(*by("[data-step=prev]")).click()
    _at(browser, 12)
    _key(browser, "END")
    _at(browser, head)
    assert "The game finished" in d.find_element(*by("#replay-caption")).text
    assert "Final result." in d.find_element(*by("#board-body .to-act")).text

    # The audit page.
    d.find_element(*by(f'a[href="/games/{gid}/audit"]')).click()
    checks = wait_for(lambda: d.find_elements(*by(".check")), message="the four checks")
    assert sorted(c.get_attribute("data-check") for c in checks) == ["hash_chain", "projection", "redecide", "seed"]
    assert all("ok" in c.get_attribute("class").split() for c in checks), [c.text for c in checks]
    assert d.find_element(*by("#commitment")).text == games[game]["seed_commitment"]
    assert len(d.find_element(*by("#seed")).text) == 64
    assert d.find_element(*by(f'a[href="/v1/games/{gid}/export"]'))
    if game == "nauticus":
        browser.screenshot(shots / "audit.png", DESKTOP)


def test_the_replay_viewer_from_a_seats_perspective(browser, games, shots):
    from selenium.webdriver.support.ui import Select

    gid = games["waters-of-nereus"]["id"]
    d = browser.driver
    browser.open(f"/games/{gid}?at=60")
    _at(browser, 60)
    Select(d.find_element(*by("#replay-seat"))).select_by_value("1")
    wait_for(
        lambda: d.find_element(*by("#board-body")).get_attribute("data-perspective") == "1",
        message="bob's perspective",
    )
    assert "as bob sees it" in d.find_element(*by("#board-body .to-act")).text
    d.find_element(*by("#replay-slider")).click()  # focus the slider: its own arrow keys move it
    _key(browser, "ARROW_RIGHT")
    wait_for(lambda: _version(browser) != 60, message="the slider moved the board")
    browser.open(f"/games/{gid}?at=60&seat=1")
    _at(browser, 60)
    browser.screenshot(shots / "replay.png", DESKTOP)


def test_a_live_board_changes_when_an_intent_is_posted(browser, games, site):
    created = games["running"]
    gid = created["id"]
    d = browser.driver
    browser.open(f"/games/{gid}")
    wait_for(lambda: d.find_element(*by("#game")).get_attribute("data-mode") == "live", message="live mode")
    before = _version(browser)
    time.sleep(0.5)  # the page is waiting for the next version
    game = requests.get(f"{site}/v1/games/{gid}", timeout=10).json()
    seat = game["to_act"][0]
    token = created["seats"][seat]["token"]
    headers = {"Authorization": f"Bearer {token}"}
    legal = requests.get(f"{site}/v1/games/{gid}/legal", headers=headers, timeout=10).json()
    resp = requests.post(
        f"{site}/v1/games/{gid}/intents",
        json={"intent": legal["intents"][0], "expected_version": legal["version"]},
        headers=headers,
        timeout=10,
    )
    assert resp.status_code == 201, resp.text
    after = resp.json()["version"]
    wait_for(lambda: _version(browser) >= after, timeout=20, message="the live board to follow the intent")
    assert after > before
    last = int(d.find_element(*by("#log")).get_attribute("data-last"))
    assert last >= after
    assert d.find_elements(*by("#log li.fresh")), "the new events are in the log"
    assert "Live:" in d.find_element(*by("#live-status")).text


def test_a_token_in_the_fragment_becomes_the_viewer_and_leaves_the_address(browser, games):
    created = games["running"]
    gid = created["id"]
    d = browser.driver
    browser.open(f"/games/{gid}#token={created['seats'][1]['token']}")
    wait_for(lambda: "dee (seat 1)" in d.find_element(*by("#viewer-name")).text, message="the seat's page")
    assert "token" not in d.current_url
    d.find_element(*by("[data-action=forget-token]")).click()
    wait_for(lambda: d.find_element(*by("#viewer-name")).text == "a spectator", message="back to a spectator")


@pytest.mark.parametrize(
    ("path", "heading"),
    [("/games/not-a-game-id", "Not found"), ("/players/nobody-here", "Not found"), ("/no/such/page", "Not found")],
)
def test_bad_addresses_get_a_clear_page(browser, path, heading):
    browser.expected.append("status of 404")  # the browser logs the failed load of the page itself
    browser.open(path)
    assert browser.driver.find_element(*by("h1")).text == heading
    text = browser.driver.find_element(*by("main")).text
    assert "Traceback" not in text and "Back to the home page" in text


def test_the_other_pages_open_cleanly(browser, games):
    d = browser.driver
    # (Its games' seats are names: guests, with no player's page; tests/browser/test_browser_accounts.py
    # opens an account's pages.)
    for path in ("/games", "/games?status=finished", "/leaderboards", "/leaderboards/nauticus"):
        browser.open(path)
        assert d.find_element(*by("h1")).text, path
        browser.size(PHONE)
        no_sideways_scroll(browser)
        browser.size(DESKTOP)
