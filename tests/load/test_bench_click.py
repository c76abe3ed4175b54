"""``make bench``'s ``click`` phase (scripts/bench/click.py): a headless Chromium plays a
game's page against the level-1 house bot while followers watch other games and clients
post intents; the page times the click to the move shown and the move to the bot's reply
shown (docs/PERFORMANCE.md, "What each figure means")."""

from __future__ import annotations

import os

import pytest
from support.bench_runs import bench

from scripts.bench import click


def test_a_persons_clicks_and_the_bots_replies_are_timed(settings, private_redis_server, tmp_path):
    if click.missing():
        pytest.fail(f"the click phase cannot run: {click.missing()}")
    # Minutes on a busy 2-core machine: 2,000 followers connect, 20 s of load.
    db = f"qd_bench_click_{os.getpid()}"
    result, _ = bench(settings, private_redis_server, tmp_path, "--only", "click", "--db", db, timeout=600)
    details = result["details"]["click_move_p95_ms"]
    assert details["no_controls"] is False, "the game page shows no move buttons"
    assert details["moves"] >= 3 and details["replies"] >= 1
    # A click whose move never showed is a failure of the page or the service, not noise.
    assert details["lost"] == 0
    # Each time runs from an event to a later frame: never 0, never negative.
    assert 0 < result["click_move_p50_ms"] <= result["click_move_p95_ms"]
    # The reply is timed from the move's 201, so a reply drawn with the move still counts its time.
    assert 0 < result["click_reply_p50_ms"] <= result["click_reply_p95_ms"]
    assert details["click_to_reply_p50_ms"] > 0
    # Where the move's time went: the page's script, the POST, the wait, the board's GET, the draw.
    parts = details["parts_ms"]
    assert set(click.PARTS) <= set(parts)
    assert all(0 <= p50 <= p95 for p50, p95 in parts.values())
    assert parts["post_server"][0] <= parts["post"][0] and parts["board_server"][0] <= parts["board"][0]
    # The followers' and the intents' load ran meanwhile.
    assert details["intents_rate"] > 0 and not details["intents_errors"]
