"""An account in a real browser (docs/API.md "Pages, for people"): sign up (the key shown
once), sign out, sign in with the key, a new key; the lobby (open a table, join it, play
bots) and My games (invitations, open tables).  The key lives in the tab's storage and is
sent only as the ``Authorization`` header: never in an address or a cookie."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from conftest import Browser, chromium_driver
from support.browser import by, no_sideways_scroll, wait_for
from support.live import live_service
from support.play_helpers import CONTROLS, play_randomly
from support.play_pages import CONFLICT_LINE, sign_up

from service.games import registry


@pytest.fixture(scope="module")
def site(settings) -> Iterator[str]:
    """The service as ``make run`` starts it (gunicorn, the workers, the house bots and their
    worker): a game found in the lobby is played to its end, the bots' moves included."""
    with live_service(settings, bots=True) as url:
        yield url


def play_together(people: list[Browser], seed: int, timeout: float = 1200.0) -> None:
    """Whoever's page offers controls clicks among them (``play_helpers``), in turn, until
    every page shows the result (the others' moves reach each page by its stream)."""
    deadline = time.monotonic() + timeout
    turn = 0
    # A click can race the stream (the board moved between the click and the post): the page
    # answers that 409 by bringing the board up to date, and Chromium logs the refused request.
    for p in people:
        p.expected.append(CONFLICT_LINE)
    while True:
        if all(p.driver.find_elements(*by("#game[data-status=finished]")) for p in people):
            break
        assert time.monotonic() < deadline, "the game did not end in time"
        offered = [
            len(p.driver.execute_script("return document.querySelectorAll(arguments[0])", CONTROLS)) for p in people
        ]
        if not any(offered):
            time.sleep(0.05)
            continue
        person = [p for p, n in zip(people, offered, strict=True) if n][turn % sum(1 for n in offered if n)]
        # Its turn over (nothing offered for a moment), the next page plays.
        play_randomly(person.driver, seed + turn, budget=30, timeout=2.0, idle=0.3)
        turn += 1
    for p in people:
        wait_for(lambda p=p: p.driver.find_element(*by("[data-role=result]")), 30, "the result")


@pytest.fixture(scope="module")
def other_driver(chromium: tuple[str, str], site: str) -> Iterator[Any]:
    """A second browser (its own profile: its own storage), for a second person; closed before
    the site stops, as ``driver``."""
    with chromium_driver(chromium) as drv:
        yield drv


@pytest.fixture
def other(other_driver: Any, site: str) -> Iterator[Browser]:
    b = Browser(other_driver, site)
    b.driver.get_log("browser")
    yield b
    errors = b.console_errors()
    assert not errors, "console errors (second browser):\n" + "\n".join(errors)


def unique(base: str) -> str:
    return f"{base}{uuid.uuid4().hex[:8]}"


def click(b: Browser, css: str, what: str) -> None:
    """Click ``css`` once it is there and can take a click (a page may still be swapping its content)."""

    def attempt() -> bool:
        b.driver.find_element(*by(css)).click()
        return True

    wait_for(attempt, 15, what)


def stored(b: Browser) -> dict[str, Any]:
    return b.driver.execute_script(
        "return {tab: sessionStorage.getItem('qd-key'), device: localStorage.getItem('qd-key'),"
        " cookie: document.cookie, url: location.href}"
    )


def sign_in(b: Browser, key: str) -> None:
    d = b.driver
    b.open("/account")
    form = wait_for(lambda: d.find_element(*by("form[data-action=sign-in]")), message="the sign-in form")
    form.find_element(*by("input[name=key]")).send_keys(key)
    form.find_element(*by("button[type=submit]")).click()
    wait_for(lambda: d.find_element(*by("[data-role=handle]")).text.strip(), message="signed in")


def sign_out(b: Browser) -> None:
    d = b.driver
    b.open("/account")
    wait_for(lambda: d.find_element(*by("[data-action=sign-out]")).is_displayed(), message="the sign-out button")
    d.find_element(*by("[data-action=sign-out]")).click()
    wait_for(lambda: d.find_element(*by("form[data-action=sign-in]")).is_displayed(), message="signed out")


def test_sign_up_shows_the_key_once_then_sign_out_sign_in_and_a_new_key(browser, site):
    d = browser.driver
    handle = unique("sue")
    key = sign_up(browser, handle)
    assert key.startswith("qdk_")
    assert d.find_element(*by("[data-role=new-key-box]")).is_displayed()
    assert "cannot be recovered" in d.find_element(*by("[data-role=new-key-box]")).text
    assert (
        requests.get(f"{site}/v1/account", headers={"Authorization": f"Bearer {key}"}, timeout=10).json()["handle"]
        == handle
    )
    seen = stored(browser)
    assert seen["tab"] == key and seen["device"] is None and seen["cookie"] == "" and key not in seen["url"]
    assert wait_for(lambda: d.find_element(*by("[data-role=account-link]")).text) == handle

    # Shown once: the page again does not show it.
    browser.open("/account")
    wait_for(lambda: d.find_element(*by("[data-role=handle]")).text == handle, message="still signed in")
    assert not d.find_element(*by("[data-role=new-key-box]")).is_displayed()
    assert key not in d.page_source

    sign_out(browser)
    assert stored(browser)["tab"] is None
    sign_in(browser, key)
    assert stored(browser)["tab"] == key

    # A new key: the old one stops working, the page keeps the new one.
    d.find_element(*by("[data-action=rotate-key]")).click()
    d.switch_to.alert.accept()
    new = wait_for(lambda: d.find_element(*by("[data-role=new-key]")).text.strip(), message="the new key")
    assert new != key and stored(browser)["tab"] == new
    assert requests.get(f"{site}/v1/account", headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code == 403
    # A key that no longer works is refused in words.
    sign_out(browser)
    form = d.find_element(*by("form[data-action=sign-in]"))
    form.find_element(*by("input[name=key]")).send_keys(key)
    form.find_element(*by("button[type=submit]")).click()
    wait_for(lambda: "not the key of an account" in form.find_element(*by("output")).text, message="refusal")
    browser.expected.append("/v1/account - Failed to load resource")
    for url in d.execute_script("return performance.getEntries().map(e => e.name)"):
        assert key not in url and new not in url
    assert d.get_cookies() == []


def test_remember_on_this_device_keeps_the_key_in_local_storage(browser):
    key = sign_up(browser, unique("rem"), remember=True)
    seen = stored(browser)
    assert seen["device"] == key and seen["tab"] is None
    sign_out(browser)
    assert stored(browser)["device"] is None


def test_play_bots_signed_in_without_typing_the_key(browser):
    d = browser.driver
    sign_up(browser, unique("pat"))
    browser.open("/")
    form = d.find_element(*by("form[data-action=play-bot]"))
    assert not form.find_elements(*by("input[name=key]"))
    form.find_element(*by("select[name=game] option[value=nauticus]")).click()
    form.find_element(*by("select[name=level] option[value='2']")).click()
    form.find_element(*by("button[type=submit]")).click()
    wait_for(lambda: "/games/" in d.current_url, 20, "the game's page")
    assert "key" not in d.current_url and "token" not in d.current_url


def test_play_bots_offers_the_games_seats_and_a_level_per_bot(browser):
    d = browser.driver
    browser.open("/")
    form = d.find_element(*by("form[data-action=play-bot]"))
    form.find_element(*by("select[name=game] option[value=nauticus]")).click()
    seats = [o.get_attribute("value") for o in form.find_elements(*by("select[name=seats] option")) if o.is_enabled()]
    engine = registry.get("nauticus")
    assert seats == [str(n) for n in range(engine.min_players, engine.max_players + 1)]
    form.find_element(*by(f"select[name=seats] option[value='{engine.max_players}']")).click()
    assert len(form.find_elements(*by("select[name=level]"))) == engine.max_players - 1


@pytest.mark.timeout(1500)
def test_two_people_meet_in_the_lobby_and_the_table_starts_for_both(browser, other, site):
    """One opens a Waters of Nereus table (casual, the neutral option offered at 2 seats),
    the other joins it from the lobby; both land on the game's page."""
    d1, d2 = browser.driver, other.driver
    sign_up(browser, unique("ada"))
    sign_up(other, unique("bo"))
    browser.open("/")
    form = d1.find_element(*by("form[data-action=open-table]"))
    form.find_element(*by("select[name=game] option[value=waters-of-nereus]")).click()
    form.find_element(*by("select[name=seats] option[value='3']")).click()
    assert not form.find_element(*by("[data-role=neutral]")).is_displayed()
    form.find_element(*by("select[name=seats] option[value='2']")).click()
    assert form.find_element(*by("[data-role=neutral]")).is_displayed()
    form.find_element(*by("button[type=submit]")).click()
    wait_for(lambda: "Waiting for" in form.find_element(*by("[data-role=form-status]")).text, 10, "waiting")

    other.open("/")
    join = wait_for(lambda: d2.find_element(*by("[data-action=join-table]")), message="a join button")
    join.click()
    wait_for(lambda: "/games/" in d2.current_url, 20, "the joiner's game page")
    wait_for(lambda: "/games/" in d1.current_url, 20, "the opener's game page")
    assert d1.current_url == d2.current_url
    gid = d1.current_url.split("/games/")[1].split("?")[0].split("#")[0]
    play_together([browser, other], seed=45)
    answer = requests.get(f"{site}/v1/games/{gid}", timeout=10).json()
    assert answer["status"] == "finished" and answer["result"]["ranking"], answer.get("result")


@pytest.mark.timeout(1200)
def test_an_invitation_is_accepted_from_my_games(browser, site, settings):
    """An organiser invites the person and a house bot (which accepts by itself); the person
    accepts on My games, lands on the game and plays it to the end in the page."""
    d = browser.driver
    handle = unique("ivy")
    key = sign_up(browser, handle)
    admin = {"Authorization": f"Bearer {settings.admin_token}"}
    org = requests.post(f"{site}/v1/organisers", json={"handle": unique("cup")}, headers=admin, timeout=10).json()
    made = requests.post(
        f"{site}/v1/games",
        json={"game": "nauticus", "players": [handle, "nauticus-bot-1"], "accounts": True, "rated": False},
        headers={"Authorization": f"Bearer {org['key']}"},
        timeout=10,
    ).json()
    gid = made["id"]
    browser.open("/me")
    accept = wait_for(lambda: d.find_element(*by(f"[data-action=accept-invitation][data-game='{gid}']")), 15, "accept")
    assert key not in d.current_url
    accept.click()
    wait_for(lambda: f"/games/{gid}" in d.current_url, 20, "the game's page")
    play_together([browser], seed=7)
    assert requests.get(f"{site}/v1/games/{gid}", timeout=10).json()["status"] == "finished"


def test_my_games_lists_running_games_tables_and_leaves_a_table(browser, site):
    d = browser.driver
    handle = unique("meg")
    key = sign_up(browser, handle)
    hdr = {"Authorization": f"Bearer {key}"}
    table = requests.post(f"{site}/v1/tables", json={"game": "nauticus", "seats": 3}, headers=hdr, timeout=10).json()
    other_table = requests.post(f"{site}/v1/tables", json={"game": "nauticus", "seats": 2}, headers=hdr, timeout=10)
    started = requests.post(
        f"{site}/v1/tables/{other_table.json()['id']}/bots", json={"level": 1}, headers=hdr, timeout=10
    ).json()
    browser.open("/me")
    wait_for(lambda: d.find_element(*by(f"#my-tables [data-table='{table['id']}']")), 15, "the open table")
    row = wait_for(lambda: d.find_element(*by(f"#my-running [data-game='{started['game_id']}']")), 15, "the game")
    assert handle in row.text
    click(browser, f"[data-action=leave-table][data-id='{table['id']}']", "leave")
    wait_for(lambda: "left the table" in d.find_element(*by("[data-role=me-status]")).text, 15, "left")
    assert not d.find_elements(*by(f"#my-tables [data-table='{table['id']}']"))
    assert requests.get(f"{site}/v1/tables/{table['id']}", timeout=10).json()["status"] == "closed"


@pytest.mark.parametrize("path", ["/", "/account", "/me", "/leaderboards", "/leaderboards/nauticus"])
def test_my_pages_at_360_px_have_no_sideways_scroll(browser, path):
    d = browser.driver
    sign_up(browser, unique("nar"))
    browser.size(360)
    try:
        browser.open(path)
        wait_for(lambda: d.execute_script("return document.readyState") == "complete", message="loaded")
        if path == "/me":
            wait_for(lambda: d.find_element(*by("#me")).get_attribute("data-handle"), 15, "My games signed in")
        no_sideways_scroll(browser)
    finally:
        browser.size(1280)


def test_the_lobby_forms_send_the_chosen_clock(browser, site):
    d = browser.driver
    handle = unique("clk")
    key = sign_up(browser, handle)
    browser.open("/")
    form = d.find_element(*by("form[data-action=open-table]"))
    form.find_element(*by("select[name=game] option[value=nauticus]")).click()
    preset = form.find_element(*by("select[name=clock] option[value*=fischer]"))
    preset.click()
    form.find_element(*by("input[name=rated]")).click()
    form.find_element(*by("button[type=submit]")).click()
    wait_for(lambda: "Waiting for" in form.find_element(*by("[data-role=form-status]")).text, 10, "waiting")
    mine = requests.get(f"{site}/v1/tables", params={"player": handle}, timeout=10).json()["tables"]
    assert len(mine) == 1 and mine[0]["rated"] is True
    assert mine[0]["clock"] == json.loads(preset.get_attribute("value"))
    requests.post(f"{site}/v1/tables/{mine[0]['id']}/leave", headers={"Authorization": f"Bearer {key}"}, timeout=10)


def test_screenshots_of_the_account_lobby_and_my_games(browser, shots):
    """The account page with its new key and the lobby at desktop width, My games on a phone
    (``make screenshots``: the README's pictures)."""
    d = browser.driver
    sign_up(browser, unique("shot"))
    browser.screenshot(shots / "account.png", 1280)
    browser.open("/")
    browser.screenshot(shots / "lobby.png", 1280)
    browser.open("/me")
    wait_for(lambda: d.find_element(*by("#me")).get_attribute("data-handle"), 15, "My games signed in")
    browser.screenshot(shots / "me-phone.png", 360)


def test_a_live_pages_header_counts_the_events_its_live_line_does(browser, site):
    """The header's event count follows the game with the live line (a spectator's page)."""
    d = browser.driver
    made = requests.post(f"{site}/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]}, timeout=10).json()
    gid = made["id"]
    browser.open(f"/games/{gid}")
    wait_for(lambda: "Live" in d.find_element(*by("#live-status")).text, 20, "the page follows the game")
    for _ in range(3):
        game = requests.get(f"{site}/v1/games/{gid}", timeout=10).json()
        seat = game["to_act"][0]
        token = next(s["token"] for s in made["seats"] if s["seat"] == seat)
        legal = requests.get(f"{site}/v1/games/{gid}/legal", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        body = {"intent": legal.json()["intents"][0], "expected_version": game["version"]}
        posted = requests.post(
            f"{site}/v1/games/{gid}/intents", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        assert posted.status_code == 201, posted.text
        version = posted.json()["version"]
        wait_for(lambda v=version: f"{v} events" in d.find_element(*by("#live-status")).text, 20, "the live line")
        assert d.find_element(*by("[data-role=event-count]")).text == f"{version} events"
