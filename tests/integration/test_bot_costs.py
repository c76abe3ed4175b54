"""What one account can make the house bots spend (docs/BOTS.md "What bots cost"), as
``make run`` serves it: gunicorn, the projection worker, ``make bots`` and one bot worker,
each its own process, on the tests' PostgreSQL, Redis and RQ queue.

One account tries to start 20 four-seat tables of three level-3 bots each and leaves the
games it got; another account's level-1 bot replies as fast as when it played alone, and
no game of bots only is left running."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterator

import pytest
from quarterdeck_sdk import ApiError, Client, Conflict
from support.live import live_service

#: Replies measured per phase (the person's turns).
SAMPLES = 12
#: Seconds a bot's reply may take at most before the test gives up.
REPLY_SECONDS = 15.0


@pytest.fixture(scope="module")
def live(settings) -> Iterator[str]:
    with live_service(settings, bots=True) as url:
        yield url


def _handle(name: str) -> str:
    return f"{name}-{random.randrange(16**6):06x}"


def _bot_table(api: Client, key: str) -> str:
    table = api.open_table(key, "nauticus", 2)
    started = api.seat_bot(key, table["id"], 1)
    assert started["status"] == "started"
    return started["game_id"]


def bot_replies(api: Client, key: str, gid: str, samples: int, chooser: random.Random) -> tuple[list[float], str]:
    """Seconds from each of the person's intents to its turn again (the bot's reply), for
    ``samples`` turns; a new table when a game ends.  Returns them and the game played last."""
    waits: list[float] = []
    board = api.game(gid, key, min_version=1)
    while len(waits) < samples:
        if board["status"] != "active":
            gid = _bot_table(api, key)
            board = api.game(gid, key, min_version=1)
            continue
        mine = board["seat"]
        if mine not in board["to_act"]:
            time.sleep(0.01)
            board = api.game(gid, key)
            continue
        legal = api.legal(gid, key, min_version=board["version"])
        intents = [i for i in legal["intents"] if i["type"] != "resign"]
        try:
            answer = api.post_intent(gid, key, chooser.choice(intents), expected_version=legal["version"])
        except Conflict as c:
            board = api.game(gid, key, min_version=c.current_version)
            continue
        posted = time.monotonic()
        board = api.game(gid, key, min_version=answer["version"])
        if mine in board["to_act"] or board["status"] != "active":
            continue  # the person's turn goes on (a Nauticus turn is several intents): no reply to time
        while board["status"] == "active" and mine not in board["to_act"]:
            assert time.monotonic() - posted < REPLY_SECONDS, f"the bot did not reply at version {board['version']}"
            time.sleep(0.01)
            board = api.game(gid, key)
        waits.append(time.monotonic() - posted)
    return waits, gid


def test_one_account_cannot_keep_the_bots_busy_for_another(live):
    started_at = time.monotonic()
    api = Client(live)
    chooser = random.Random(46)
    bob_key = api.register(_handle("bob"))["key"]
    alone, bob_game = bot_replies(api, bob_key, _bot_table(api, bob_key), SAMPLES, chooser)

    # The flood: 20 tables of four seats, three level-3 bots at each, then leave.
    eve_key = api.register(_handle("eve"))["key"]
    games, refused = [], []
    for _ in range(20):
        table = api.open_table(eve_key, "nauticus", 4, rated=True)
        try:
            for _ in range(3):
                body = api.seat_bot(eve_key, table["id"], 3)
            assert body["status"] == "started"
            games.append(body["game_id"])
        except ApiError as exc:
            refused.append(exc.code)
            api.leave_table(eve_key, table["id"])
    for gid in games:
        api.post_intent(gid, eve_key, {"type": "resign"})
    flooded, _ = bot_replies(api, bob_key, bob_game, SAMPLES, chooser)

    # No game of bots only goes on: each ended with its person's resignation.
    deadline = time.monotonic() + 60
    running = list(games)
    while running and time.monotonic() < deadline:
        running = [gid for gid in running if api.game(gid)["status"] == "active"]
        time.sleep(0.2)
    finished = {gid: api.game(gid)["result"] for gid in games}
    median_alone, median_flooded = statistics.median(alone), statistics.median(flooded)
    print(
        f"\nbob's level-1 replies: median {median_alone * 1000:.0f} ms alone, {median_flooded * 1000:.0f} ms"
        f" after eve's flood; eve started {len(games)} of 20 tables ({len(refused)} refused: {set(refused)});"
        f" {len(running)} bot-only game(s) running; {time.monotonic() - started_at:.1f} s in all"
    )
    assert len(games) == 3 and set(refused) == {"too_many_bot_games"} and len(refused) == 17
    assert running == [], running
    assert all(r["reason"] == "forfeit" and r["ranks"][str(r["ranking"][-1])] == 4 for r in finished.values())
    assert median_flooded <= 2 * median_alone, (alone, flooded)
