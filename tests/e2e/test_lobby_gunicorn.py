"""The lobby end to end, through gunicorn (as ``make run`` starts it) and an RQ
worker, with rate limits ON: two accounts made over HTTP find each other in
the lobby and play a rated game to the end with their keys, and only that
game moves the leaderboard; a casual game by the same names does not; a flood
of creations gets 429s and nothing more is stored."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
import requests
from quarterdeck_sdk import ApiError, Client, RandomBot
from support.live import live_service

#: Creations allowed per client address during the test (the flood gets the rest).
CREATIONS = 6


@pytest.fixture(scope="module")
def live(settings) -> Iterator[str]:
    # Limits on, as in production; the budgets a bot playing fast needs are
    # wide, creation is tight so that the flood below meets it.
    limits = {
        "QD_RATE_LIMITS": "on",
        "QD_LIMIT_CREATION": f"{CREATIONS}/minute",
        "QD_LIMIT_CREATION_KEY": f"{CREATIONS}/minute",
        "QD_LIMIT_INTENTS": "1000/second",
        "QD_LIMIT_INTENTS_KEY": "1000/second",
        "QD_LIMIT_READS": "2000/second",
        "QD_LIMIT_READS_KEY": "2000/second",
    }
    with live_service(settings, **limits) as url:
        yield url


def _games(settings) -> int:
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute("SELECT count(*) FROM games").fetchone()[0]


def _entries(api: Client, game: str, players: list[str]) -> dict[str, dict]:
    """The players' ratings of ``game`` from their pages: one game leaves a rating
    provisional, off the leaderboard (docs/LEADERBOARDS.md, "Trust")."""
    out = {}
    for player in players:
        try:
            ratings = api.player(player)["ratings"]
        except ApiError:
            continue  # no page yet
        out.update((player, r) for r in ratings if r["game"] == game)
    return out


def test_two_accounts_play_a_rated_game_found_in_the_lobby(live, settings):
    tag = uuid.uuid4().hex[:6]
    ann, bob = f"ann-{tag}", f"bob-{tag}"
    api = Client(live)
    keys = {ann: api.register(ann)["key"], bob: api.register(bob)["key"]}
    assert api.account(keys[ann]) == {"handle": ann, "kind": "player"}

    # Ann opens a rated table; Bob finds it in the lobby and joins: it starts.
    table = api.open_table(keys[ann], "nauticus", 2, rated=True)
    listed = [t for t in api.tables("nauticus") if t["id"] == table["id"]]
    assert listed and listed[0]["players"] == [ann] and listed[0]["status"] == "open"
    started = api.join_table(keys[bob], table["id"])
    assert started["status"] == "started" and started["game_id"]
    gid = started["game_id"]
    with pytest.raises(ApiError) as late:
        api.join_table(api.register(f"cy-{tag}")["key"], table["id"])
    assert late.value.status == 409 and late.value.code == "table_full"

    # Each plays its own seat with its own key (seats drawn at the start).
    bot = RandomBot.seated(api, gid, keys, chooser=random.Random(11))
    final = bot.play()
    assert final["status"] == "finished" and final["rated"] is True
    assert sorted(final["players"]) == sorted([ann, bob])

    # Only that game moves the leaderboard ...
    deadline = time.monotonic() + 30
    while not ({ann, bob} <= set(_entries(api, "nauticus", [ann, bob]))):
        assert time.monotonic() < deadline, "the leaderboards did not fold the rated game"
        time.sleep(0.3)
    before = _entries(api, "nauticus", [ann, bob])
    assert before[ann]["games"] == before[bob]["games"] == 1
    assert before[ann]["provisional"] is True and before[ann]["position"] is None
    assert not {ann, bob} & {e["player"] for e in api.leaderboard("nauticus", limit=500)["entries"]}

    # ... a casual game by the same names does not.
    casual = api.create_game("nauticus", [ann, bob])
    assert "rated" not in casual and all("token" in s for s in casual["seats"])
    final = RandomBot(api, casual, random.Random(12)).play()
    assert final["rated"] is False
    # Seated by name, ann and bob are guests there: the game reaches neither account's page
    # (tests/integration/test_game_lists.py folds that deterministically) and moves no rating.
    page = api.player(ann)
    assert {g["game_id"]: g["rated"] for g in page["recent"]} == {gid: True}
    assert _entries(api, "nauticus", [ann, bob]) == before

    # The audit of the rated game passes, and re-derives its seat order.
    report = requests.get(f"{live}/v1/games/{gid}/audit", timeout=30).json()
    assert report["ok"], report
    assert report["checks"]["redecide"]["details"]["seating"]["drawn"] == final_players(api, gid)
    api.close()


def final_players(api: Client, gid: str) -> list[str]:
    return api.game(gid)["players"]


def test_a_flood_of_creations_gets_429s_and_nothing_more_is_stored(live, settings):
    """Runs after the lobby test, from the same address: 3 of the 6 creations
    of the minute are spent (a table, a join, a casual game)."""
    before = _games(settings)
    answers = [
        requests.post(f"{live}/v1/games", json={"game": "nautilus-industries", "players": ["a", "b"]}, timeout=10)
        for _ in range(40)
    ]
    statuses = [r.status_code for r in answers]
    created = statuses.count(201)
    assert 0 < created <= CREATIONS and statuses.count(429) == len(answers) - created, statuses
    refused = answers[-1]
    assert refused.json()["error"]["code"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) >= 1
    time.sleep(0.5)
    assert _games(settings) == before + created
    # Reads are another budget: still served.
    assert requests.get(f"{live}/v1/tables", timeout=10).status_code == 200
