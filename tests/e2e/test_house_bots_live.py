"""The house bots (docs/BOTS.md), end to end, as ``make run`` serves it (gunicorn, the
projection worker, ``make bots`` and the bot worker, each its own process), with
rate limits on: a person with an account opens a rated Waters of Nereus table,
seats two house bots through the API, plays it to the end with its key, and the
bots' moves arrive by themselves (docs/BOTS.md "House bots")."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterator

import pytest
from quarterdeck_sdk import Client, Conflict
from support.live import live_service

#: A bot's move is seen within this many seconds of its turn: the levels think for tens of
#: milliseconds, the rest is the projection, the worker's queue and the wait; a turn the
#: listener missed is found again by the bot worker's resync (``QD_BOT_RESYNC_SECONDS``, 30 s).
#: This checks that the moves arrive by themselves; how fast is the bench's (``click``).
MOVE_SECONDS = 45.0


@pytest.fixture(scope="module")
def live(settings) -> Iterator[str]:
    limits = {
        "QD_RATE_LIMITS": "on",
        "QD_LIMIT_INTENTS": "1000/second",
        "QD_LIMIT_INTENTS_KEY": "1000/second",
        "QD_LIMIT_READS": "2000/second",
        "QD_LIMIT_READS_KEY": "2000/second",
    }
    with live_service(settings, bots=True, **limits) as url:
        yield url


def test_a_person_plays_a_rated_waters_of_nereus_table_against_two_house_bots(live):
    api = Client(live)
    me = f"ann-{random.randrange(16**6):06x}"
    key = api.register(me)["key"]
    bots = {(b["game"], b["level"]): b for b in api.bots()}
    assert {("waters-of-nereus", 1), ("waters-of-nereus", 2)} <= set(bots)

    table = api.open_table(key, "waters-of-nereus", 3, rated=True)
    assert api.seat_bot(key, table["id"], 1)["status"] == "open"
    started = api.seat_bot(key, table["id"], 2)
    assert started["status"] == "started" and started["game_id"]
    gid = started["game_id"]
    bot_handles = {bots["waters-of-nereus", 1]["handle"], bots["waters-of-nereus", 2]["handle"]}

    chooser = random.Random(34)
    board = api.game(gid, key, min_version=1)
    assert board["rated"] is True and set(board["players"]) == bot_handles | {me}
    mine = board["seat"]
    waits: list[float] = []
    my_intents = 0
    while board["status"] == "active":
        if mine in board["to_act"]:
            legal = api.legal(gid, key, min_version=board["version"])
            intents = [i for i in legal["intents"] if i["type"] != "resign"]
            try:
                answer = api.post_intent(gid, key, chooser.choice(intents), expected_version=legal["version"])
            except Conflict as c:  # a bot chose first (simultaneous choices): read again
                board = api.game(gid, key, min_version=c.current_version)
                continue
            my_intents += 1
            board = api.game(gid, key, min_version=answer["version"])
        else:
            # Only bots are to act: their moves arrive with nobody else posting.
            asked = time.monotonic()
            version = board["version"]
            while (board := api.game(gid, key, min_version=version + 1))["version"] <= version:
                assert time.monotonic() - asked < MOVE_SECONDS, f"the bots did not move at version {version}"
            waits.append(time.monotonic() - asked)
        assert my_intents < 5000
    assert board["status"] == "finished" and board["result"]["reason"] == "completed", board["result"]
    assert waits, "the bots never moved"
    print(
        f"\nbots moved {len(waits)} times; wait p50 {statistics.median(waits) * 1000:.0f} ms,"
        f" max {max(waits) * 1000:.0f} ms; {my_intents} intents of mine"
    )
    # Rated like everyone: the finished game is folded into every seat's rating (provisional
    # until enough games, so on the players' pages: docs/LEADERBOARDS.md "Trust").
    deadline = time.monotonic() + 30
    while True:
        rated_on = {
            h for h in bot_handles | {me} if any(r["game"] == "waters-of-nereus" for r in api.player(h)["ratings"])
        }
        if rated_on == bot_handles | {me}:
            break
        assert time.monotonic() < deadline, "the leaderboards did not fold the rated game"
        time.sleep(0.3)
    rated = {b["handle"]: b["rating"] for b in api.bots()}
    assert all(rated[h] is not None for h in bot_handles)


def test_the_demo_plays_house_bots_of_several_levels(live, capsys):
    """``make demo`` (``scripts.demo``): random bots against house bots whose levels rotate."""
    from scripts import demo

    tag = f"{random.randrange(16**4):04x}"
    demo.CREW = [f"ahab{tag}", f"stubb{tag}", f"flask{tag}"]
    argv = ["--url", live, "--games", "nauticus", "waters-of-nereus", "--players", "3", "--seed", "5"]
    rc = demo.main(argv)
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "nauticus             3p vs house bots 3, 2" in out, out
    assert "waters-of-nereus     3p vs house bots 2, 1" in out, out
    assert out.count("finished, winner") == 2
    results = out.split("Results", 1)[1].split("Leaderboards", 1)[0]
    assert "nauticus-bot-3" in results and "waters-of-nereus-bot-1" in results
