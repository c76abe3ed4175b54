"""The home page's "Play bots" in a real browser (docs/BOTS.md "House bots"): a
signed-in player opens a table with the chosen house bot, and the game's page
opens as that player's seat (the key is not typed again), the bot's seat marked
with its level."""

from __future__ import annotations

import time
import uuid

import pytest
import requests

from service.adapters.house_bots import HouseBots, levels
from service.games import registry


@pytest.fixture(scope="module")
def house(ctx, settings) -> None:
    HouseBots(ctx.store.pool).provision(registry.names(), levels(), settings.bot_key_secret)


def test_play_a_bot_from_the_home_page(browser, site, house):
    handle = f"pat{uuid.uuid4().hex[:8]}"
    key = requests.post(f"{site}/v1/accounts", json={"handle": handle}, timeout=10).json()["key"]
    d = browser.driver
    browser.open("/account")
    signin = d.find_element("css selector", "form[data-action=sign-in]")
    signin.find_element("css selector", "input[name=key]").send_keys(key)
    signin.find_element("css selector", "button[type=submit]").click()
    deadline = time.monotonic() + 20
    while d.find_element("css selector", "[data-role=handle]").text != handle:
        assert time.monotonic() < deadline, "not signed in"
        time.sleep(0.1)
    browser.open("/")
    form = d.find_element("css selector", "form[data-action=play-bot]")
    form.find_element("css selector", "select[name=game] option[value=nauticus]").click()
    form.find_element("css selector", "select[name=level] option[value='2']").click()
    form.find_element("css selector", "button[type=submit]").click()
    deadline = time.monotonic() + 20
    while "/games/" not in d.current_url:
        assert time.monotonic() < deadline, "the game's page did not open"
        time.sleep(0.1)
    while True:
        try:
            viewer = d.find_element("css selector", "#viewer-name").text
            players = d.find_element("css selector", ".players").text
            if "seat" in viewer and "house bot, level 2" in players:
                break
        except Exception:  # the page is being replaced by its token's version
            pass
        assert time.monotonic() < deadline, "the page did not show the seat and the bot"
        time.sleep(0.1)
    assert handle in viewer and "nauticus-bot-2" in players and "token" not in d.current_url
