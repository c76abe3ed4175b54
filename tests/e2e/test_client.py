"""The example client (``quarterdeck_sdk``) against a real HTTP server (werkzeug
on a loopback port) backed by real PostgreSQL and Redis: a bot plays a game
to the end through ``/legal`` only, idempotent retries, conflicts, errors,
and the leaderboard and player pages it reads."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterator

import pytest
from quarterdeck_sdk import ApiError, Client, Conflict, RandomBot
from support import serving

from projections import leaderboards as lb


@pytest.fixture(scope="module")
def base_url(app) -> Iterator[str]:
    with serving(app) as url:
        yield url


def _players() -> list[str]:
    tag = uuid.uuid4().hex[:6]
    return [f"ann-{tag}", f"bob-{tag}"]


def test_random_bot_plays_a_game_to_the_end_and_the_pages_show_it(base_url, ctx, settings):
    api = Client(base_url)
    players = _players()
    # Only rated games reach the leaderboards: two accounts, seated by an organiser.
    keys = {p: api.register(p)["key"] for p in players}
    organiser = api.create_organiser(f"cup-{players[0]}", settings.admin_token)["key"]
    created = api.create_game("nauticus", players, key=organiser, accounts=True, rated=True)
    assert [s["player"] for s in created["seats"]] == players
    # The game starts once both accept with their own keys (docs/API.md, "Consent").
    assert created["status"] == "invited"
    for key in keys.values():
        assert [a["status"] for a in api.accept_all(key)] == ["accepted"]
    steps: list[int] = []
    bot = RandomBot(api, created, random.Random(2), keys=keys)
    final = bot.play(progress=lambda b: steps.append(b.intents))
    assert final["status"] == "finished" and final["to_act"] == []
    assert sorted(final["result"]["ranks"]) == ["0", "1"]
    assert bot.intents > 10 and steps[-1] == bot.intents
    # The intents recorded are exactly those the bot counted (no duplicates
    # from retries): every seated event carries its intent's id.
    intents = {e.meta["intent_id"] for e in ctx.store.read(created["id"]) if e.meta.get("seat") is not None}
    assert len(intents) == bot.intents

    deadline = time.monotonic() + 20
    while not api.player(players[0])["recent"]:
        assert time.monotonic() < deadline, "leaderboards did not fold the game"
        lb.consume(ctx.redis, ctx.store)
        time.sleep(0.05)
    page = api.player(players[0])
    assert page["recent"][0]["game_id"] == created["id"]
    assert page["ratings"][0]["game"] == "nauticus" and page["ratings"][0]["games"] == 1
    # One counted game: provisional, not listed yet (docs/LEADERBOARDS.md, "Trust").
    assert page["ratings"][0]["provisional"] is True and page["ratings"][0]["position"] is None
    board = api.leaderboard("nauticus", limit=500)
    assert not {players[0], players[1]} & {e["player"] for e in board["entries"]}
    listed = api.games(player=players[0], status="finished")
    assert [g["id"] for g in listed["games"]] == [created["id"]]
    api.close()


def test_idempotency_key_replays_and_stale_version_conflicts(base_url, ctx):
    api = Client(base_url)
    created = api.create_game("nauticus", _players())
    gid = created["id"]
    game = api.game(gid, min_version=created["version"])
    token = created["seats"][game["to_act"][0]]["token"]
    legal = api.legal(gid, token, min_version=created["version"])
    first = api.post_intent(gid, token, legal["intents"][0], legal["version"], idempotency_key="k-1")
    again = api.post_intent(gid, token, legal["intents"][0], legal["version"], idempotency_key="k-1")
    assert again["version"] == first["version"] and again.get("replayed") is True
    assert ctx.store.version(gid) == first["version"], "a replay appends nothing"
    with pytest.raises(Conflict) as stale:
        api.post_intent(gid, token, legal["intents"][0], legal["version"])
    assert stale.value.status == 409 and stale.value.code == "version_conflict"
    # Read-your-writes: a read asking for the new version sees it.
    assert api.game(gid, min_version=first["version"])["version"] >= first["version"]
    api.close()


def test_errors_are_typed_and_unreachable_servers_raise(base_url):
    api = Client(base_url)
    with pytest.raises(ApiError) as unknown:
        api.leaderboard("chess")
    assert unknown.value.status == 404 and unknown.value.code == "game_type_not_found"
    with pytest.raises(ApiError) as bad:
        api.create_game("nauticus", ["solo"])
    assert bad.value.status == 422
    assert {g["game"] for g in api.leaderboards()["games"]} >= {"nauticus"}
    api.close()
    dead = Client("http://127.0.0.1:9", timeout=1, retries=1)
    with pytest.raises(OSError):
        dead.health()
    with pytest.raises(ValueError):
        Client("ftp://example.org")


def test_demo_script_plays_prints_results_and_leaderboards(base_url, ctx, capsys, monkeypatch):
    """``scripts.demo`` (what ``make demo`` runs), limited to one game type."""
    from scripts import demo

    monkeypatch.setattr(demo, "CREW", _players())  # handles of this test only
    # serving() projects like the worker does; the demo sees its games finish.
    # No bot worker here: random bots only (the house bots' demo: tests/e2e/test_house_bots_live.py).
    argv = ["--url", base_url, "--games", "nauticus", "--players", "2", "--seed", "4", "--timeout", "60"]
    rc = demo.main([*argv, "--no-house-bots"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "[1/1] nauticus" in out and "finished, winner" in out
    assert "Results" in out and "Leaderboards" in out
    assert demo.CREW[0] in out.split("Leaderboards", 1)[1]
