"""The tournament pages in a real browser (headless Chromium, see conftest.py):
a person opens the home page, follows a finished tournament, reads its
standings (after the last round and after an earlier one) and its rounds, and
opens a table's game; a running tournament's page follows the tournament to its
end by itself; a bad id gets a clear page; no page logs a console error.  The
screenshot of a tournament's page is taken on the way (``make screenshots``
keeps it in docs/img/ for the README)."""

from __future__ import annotations

from typing import Any

import pytest
from support.browser import DESKTOP, PHONE, by, no_sideways_scroll, wait_for
from support.tournaments import resign_all_but_one, run_tournament, work

from projections.runner import project_game


@pytest.fixture(scope="module")
def finished(app, ctx, settings) -> dict[str, Any]:
    """Four players, tables of two, two rounds: each round's first table played by the rules."""
    return run_tournament(
        app,
        ctx,
        settings,
        name="Harbour Cup",
        handles=["marta", "ines", "tomas", "kofi"],
        organiser_handle="harbour-club",
    )


@pytest.fixture(scope="module")
def running(app, ctx, settings) -> dict[str, Any]:
    """Round 1 played, round 2's games running."""
    return run_tournament(app, ctx, settings, name="Lighthouse Open", played_rounds=1, play_first_table=False)


def _standings(d) -> list[str]:
    return [row.get_attribute("data-player") for row in d.find_elements(*by("#standings tbody tr[data-player]"))]


def test_follow_a_finished_tournament_from_the_home_page_to_a_game(browser, app, finished, shots):
    client = app.test_client()
    tid = finished["id"]
    d = browser.driver
    browser.open("/")
    wait_for(lambda: d.find_element(*by(f'#tournament-list a[href="/tournaments/{tid}"]')), message="listed").click()
    wait_for(lambda: d.find_element(*by("#tournament")), message="the tournament's page")
    assert d.find_element(*by("h1")).text == "Harbour Cup"
    assert d.find_element(*by("#round-of")).text == "2 of 2"
    summary = client.get(f"/v1/tournaments/{tid}").get_json()
    assert d.find_element(*by("#seed")).text == summary["seed"]
    # The standings after the last round, as the JSON API has them.
    latest = client.get(f"/v1/tournaments/{tid}/standings").get_json()
    assert _standings(d) == [s["player"] for s in latest["standings"]]
    # Both rounds, the latest open, each table with its game.
    rounds = d.find_elements(*by("details.round"))
    assert [r.get_attribute("data-round") for r in rounds] == ["2", "1"]
    assert rounds[0].get_attribute("open") and not rounds[1].get_attribute("open")
    assert len(d.find_elements(*by("details.round tr[data-table] a.game-link"))) == 4
    browser.screenshot(shots / "tournament.png", DESKTOP)
    browser.size(PHONE)
    no_sideways_scroll(browser)
    browser.screenshot(shots / "tournament-phone.png", PHONE)
    browser.size(DESKTOP)

    # The standings after round 1.
    d.find_element(*by(".rounds-nav a")).click()
    wait_for(lambda: "round=1" in d.current_url, message="round 1's address")
    after_one = client.get(f"/v1/tournaments/{tid}/standings?round=1").get_json()
    wait_for(lambda: _standings(d) == [s["player"] for s in after_one["standings"]], message="round 1's standings")
    assert d.find_element(*by("#standings-h")).text == "Standings after round 1"

    # A table of round 1 (open it), and its game's page.
    table = client.get(f"/v1/tournaments/{tid}/rounds/1").get_json()["tables"][0]
    d.find_element(*by("#round-1 summary")).click()
    link = wait_for(lambda: d.find_element(*by(f'#round-1 a[href="/games/{table["game_id"]}"]')), message="link")
    wait_for(lambda: link.is_displayed(), message="round 1 opened")
    link.click()
    wait_for(lambda: d.find_element(*by("#board-body")), message="the game's board")
    assert d.find_element(*by("h1")).text == "Nauticus"
    assert d.find_element(*by("#game")).get_attribute("data-game") == table["game_id"]
    players = d.find_element(*by(".game-head .players")).text
    assert all(p in players for p in table["players"]), players


def test_a_running_tournaments_page_follows_it_to_its_end(browser, app, ctx, running):
    client = app.test_client()
    tid = running["id"]
    d = browser.driver
    browser.open(f"/tournaments/{tid}")
    root = wait_for(lambda: d.find_element(*by("#tournament")), message="the tournament's page")
    assert root.get_attribute("data-status") == "running"
    assert "revealed when the tournament finishes" in d.find_element(*by("#seed")).text
    assert "(being played)" in d.find_element(*by("#standings-h")).text
    # The last round's games end; the worker records them and the tournament finishes.
    for table in client.get(f"/v1/tournaments/{tid}/rounds/2").get_json()["tables"]:
        resign_all_but_one(client, ctx, table["game_id"], running["keys"])
        project_game(ctx.redis, ctx.store, table["game_id"])
    work(ctx, tid)
    summary = client.get(f"/v1/tournaments/{tid}").get_json()
    assert summary["status"] == "finished"
    # The page's poll (every 5 s) sees the new version and swaps the page in.
    wait_for(
        lambda: d.find_element(*by("#tournament")).get_attribute("data-status") == "finished",
        timeout=30,
        message="the page to follow the tournament to its end",
    )
    assert d.find_element(*by("#seed")).text == summary["seed"]
    assert "Updated at" in d.find_element(*by("#live-status")).text
    assert d.find_element(*by("#standings-h")).text == "Standings after round 2"


@pytest.mark.parametrize("path", ["/tournaments/not-a-tournament", "/tournaments/00000000-0000-4000-8000-000000000000"])
def test_bad_tournament_addresses_get_a_clear_page(browser, path):
    browser.expected.append("status of 404")  # the browser logs the failed load of the page itself
    browser.open(path)
    assert browser.driver.find_element(*by("h1")).text == "Not found"
    text = browser.driver.find_element(*by("main")).text
    assert "Traceback" not in text and "Back to the home page" in text
