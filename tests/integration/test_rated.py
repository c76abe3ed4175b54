"""Rated and casual games on the leaderboards, against real PostgreSQL, Redis
and the worker's job (docs/API.md "Rated and casual games"): a rated game of
two accounts found in the lobby moves the leaderboard; a casual game by the
same names does not, and is not on the accounts' pages (its names are guests'); the live
leaderboards equal a rebuild; leaderboards of an older format are folded
again by themselves."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from support import auth, command_of, wait_for_feed_horizon
from support.accounts import register, unique

from projections import leaderboards as lb
from projections.runner import project_game
from service.domain.identity import ACCOUNT, Principal


def play_to_the_end(app, gid: str, actors: dict[int, dict[str, Any]], seed: int) -> int:
    """Random legal intents through the game service (no HTTP, no projection),
    each seat acting as ``actors[seat]``: ``{"principal": ...}`` or ``{"token": ...}``."""
    games = app.extensions["quarterdeck"].games
    chooser = random.Random(seed)
    posted = 0
    while True:
        loaded = games.load(gid)
        with loaded.lock:
            games.refresh(loaded)
            if loaded.finished:
                return posted
            seat = chooser.choice(loaded.engine.to_act(loaded.state))
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        actor = actors[seat]
        games.submit(gid, actor.get("token"), command, None, None, f"{gid}-{posted}", principal=actor.get("principal"))
        posted += 1


def leaderboard_keys(r) -> dict[bytes, Any]:
    out: dict[bytes, Any] = {}
    for key in sorted(r.scan_iter(match=lb.PREFIX + "*", count=1000)):
        kind = r.type(key)
        if kind == b"hash":
            out[key] = sorted(r.hgetall(key).items())
        elif kind == b"zset":
            out[key] = r.zrange(key, 0, -1, withscores=True)
        elif kind == b"list":
            out[key] = r.lrange(key, 0, -1)
        else:
            out[key] = r.get(key)
    return out


def fold(ctx) -> None:
    """Fold the leaderboards to the end of the feed.  The feed stops short of any
    transaction open anywhere in the cluster (another test process's, a database being
    created): wait until it holds every event of this database first."""
    wait_for_feed_horizon(ctx.settings.database_url)
    for _ in range(50):
        if not lb.consume(ctx.redis, ctx.store):
            break


def test_only_the_rated_game_moves_the_leaderboard(app, client, ctx):
    accounts = app.extensions["quarterdeck"].accounts
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    # Ann opens a rated table; Bob finds it in the lobby and joins: the game starts.
    table = client.post(
        "/v1/tables", json={"game": "nauticus", "seats": 2, "rated": True}, headers=auth(ann_key)
    ).get_json()
    found = [t for t in client.get("/v1/tables?game=nauticus").get_json()["tables"] if t["id"] == table["id"]]
    assert found and found[0]["players"] == [ann]
    started = client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key)).get_json()
    gid = started["game_id"]
    opening = ctx.store.read(gid, upto=1)[0].data
    keys = {ann: ann_key, bob: bob_key}
    actors = {
        seat: {"principal": Principal(ACCOUNT, accounts.by_key(keys[handle]))}
        for seat, handle in enumerate(opening["players"])
    }
    play_to_the_end(app, gid, actors, seed=1)

    # A casual game by the very same names, played to the end as well.
    casual = client.post("/v1/games", json={"game": "nauticus", "players": [ann, bob]}).get_json()
    play_to_the_end(app, casual["id"], {s["seat"]: {"token": s["token"]} for s in casual["seats"]}, seed=2)
    fold(ctx)

    for handle in (ann, bob):
        page = client.get(f"/v1/players/{handle}").get_json()
        # One counted game: a provisional rating (docs/LEADERBOARDS.md, "Trust").
        assert [(r["games"], r["provisional"], r["position"]) for r in page["ratings"]] == [(1, True, None)]
        recent = {e["game_id"]: e for e in page["recent"]}
        assert recent[gid]["rated"] is True and isinstance(recent[gid]["rating_after"], float)
        # The casual game by the same names was played by guests: not on the accounts' pages.
        assert casual["id"] not in recent
    project_game(ctx.redis, ctx.store, gid)
    project_game(ctx.redis, ctx.store, casual["id"])
    assert client.get(f"/v1/games/{gid}").get_json()["rated"] is True
    assert client.get(f"/v1/games/{casual['id']}").get_json()["rated"] is False

    # Live equals rebuild, byte for byte.
    live = leaderboard_keys(ctx.redis)
    lb.consume(ctx.redis, ctx.store, rebuild=True)
    assert leaderboard_keys(ctx.redis) == live


def test_casual_games_alone_move_no_rating(app, client, ctx):
    names = [unique("p"), unique("q")]
    created = client.post("/v1/games", json={"game": "nauticus", "players": names}).get_json()
    before = client.get("/v1/leaderboards/nauticus?limit=500").get_json()
    play_to_the_end(app, created["id"], {s["seat"]: {"token": s["token"]} for s in created["seats"]}, seed=3)
    fold(ctx)
    after = client.get("/v1/leaderboards/nauticus?limit=500").get_json()
    assert after["finished_games"] == before["finished_games"]
    assert not {e["player"] for e in after["entries"]} & set(names)
    # Names in a casual game are guests': no player's page.
    assert client.get(f"/v1/players/{names[0]}").status_code == 404


def test_leaderboards_of_an_older_format_are_folded_again(ctx):
    """What happens on the first run after the upgrade that made casual games
    casual: leaderboards folded when every game counted are dropped and
    folded again, and then equal a rebuild."""
    fold(ctx)
    live = leaderboard_keys(ctx.redis)
    stale = unique("old")
    ctx.redis.hset(lb.stats_key("nauticus"), stale, json.dumps(lb.new_record()))
    ctx.redis.zadd(lb.board_key("nauticus"), {stale: 0.0})
    ctx.redis.delete(lb.FORMAT_KEY)  # written before formats existed
    fold(ctx)
    assert ctx.redis.hget(lb.stats_key("nauticus"), stale) is None
    assert ctx.redis.get(lb.FORMAT_KEY) == lb.FORMAT.encode()
    assert leaderboard_keys(ctx.redis) == live


# -- What counts (docs/LEADERBOARDS.md "What counts"; service/domain/counting.py) ----------------


def rated_table_game(app, client, keys: dict[str, str]) -> tuple[str, dict[int, dict[str, Any]]]:
    """A rated game of two accounts through the lobby: the first opens a table, the second
    joins.  Returns the game and its actors by seat."""
    accounts = app.extensions["quarterdeck"].accounts
    (first, first_key), (second, second_key) = keys.items()
    table = client.post(
        "/v1/tables", json={"game": "nauticus", "seats": 2, "rated": True}, headers=auth(first_key)
    ).get_json()
    joined = client.post(f"/v1/tables/{table['id']}/join", headers=auth(second_key))
    assert joined.status_code in (200, 201), joined.get_json()
    gid = joined.get_json()["game_id"]
    players = app.extensions["quarterdeck"].store.read(gid, upto=1)[0].data["players"]
    actors = {seat: {"principal": Principal(ACCOUNT, accounts.by_key(keys[h]))} for seat, h in enumerate(players)}
    return gid, actors


def resign(app, gid: str, actor: dict[str, Any]) -> None:
    games = app.extensions["quarterdeck"].games
    games.submit(
        gid, None, command_of(games, gid, {"type": "resign"}), None, None, f"{gid}-resign", principal=actor["principal"]
    )


class Clock:
    """The game service's "now", set by the test: a day's games in a few seconds."""

    def __init__(self, start: str = "2031-01-01T00:00:00"):
        self.at = datetime.fromisoformat(start).replace(tzinfo=UTC)

    def __call__(self) -> str:
        return self.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def advance(self, **delta: float) -> None:
        self.at += timedelta(**delta)


def test_a_rated_game_left_before_every_first_decision_finishes_unrated(app, client, ctx):
    """The sybil's game: a second account joins a rated table and resigns at once."""
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    gid, actors = rated_table_game(app, client, {ann: ann_key, bob: bob_key})
    players = ctx.store.read(gid, upto=1)[0].data["players"]
    resign(app, gid, actors[players.index(bob)])
    fold(ctx)
    project_game(ctx.redis, ctx.store, gid)
    shown = client.get(f"/v1/games/{gid}").get_json()
    assert shown["status"] == "finished"
    assert (shown["rated"], shown["unrated_reason"]) == (False, "no_first_decision")
    for handle in (ann, bob):
        page = client.get(f"/v1/players/{handle}").get_json()
        assert page["ratings"] == [], page
        assert [(e["rated"], e.get("unrated_reason")) for e in page["recent"]] == [(False, "no_first_decision")]
    listed = client.get("/v1/games?rated=true&limit=100").get_json()["games"]
    assert gid not in {g["id"] for g in listed}


def test_a_rated_game_resigned_after_both_first_decisions_counts(app, client, ctx):
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    gid, actors = rated_table_game(app, client, {ann: ann_key, bob: bob_key})
    games = app.extensions["quarterdeck"].games
    chooser = random.Random(5)
    decided: set[int] = set()
    posted = 0
    while decided != {0, 1}:
        loaded = games.load(gid)
        with loaded.lock:
            games.refresh(loaded)
            seat = loaded.engine.to_act(loaded.state)[0]
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        games.submit(gid, None, command, None, None, f"{gid}-{posted}", principal=actors[seat]["principal"])
        decided.add(seat)
        posted += 1
    resign(app, gid, actors[0])
    fold(ctx)
    project_game(ctx.redis, ctx.store, gid)
    shown = client.get(f"/v1/games/{gid}").get_json()
    assert (shown["status"], shown["rated"], shown["unrated_reason"]) == ("finished", True, None)
    page = client.get(f"/v1/players/{ann}").get_json()
    assert [r["games"] for r in page["ratings"]] == [1]


def test_repeated_pairings_stop_counting_within_the_window_and_provisional_ratings_are_not_listed(app, client, ctx):
    """At most counting.PAIRING_LIMIT games of the same accounts count in any
    PAIRING_WINDOW_S; two fresh accounts playing only each other are never listed
    (docs/LEADERBOARDS.md, "Trust": neither has an established opponent)."""
    from service.domain import counting

    games = app.extensions["quarterdeck"].games
    clock = Clock()
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    pair = {ann: ann_key, bob: bob_key}
    ids = []
    with_now = games.now
    games.now = clock
    try:
        # PAIRING_LIMIT + 1 games in one hour: the last does not count.
        for i in range(counting.PAIRING_LIMIT + 1):
            gid, actors = rated_table_game(app, client, pair)
            play_to_the_end(app, gid, actors, seed=10 + i)
            ids.append(gid)
            clock.advance(minutes=10)
        fold(ctx)
        page = client.get(f"/v1/players/{ann}").get_json()
        assert [r["games"] for r in page["ratings"]] == [counting.PAIRING_LIMIT]
        recent = {e["game_id"]: e for e in page["recent"]}
        assert [(recent[g]["rated"], recent[g].get("unrated_reason")) for g in ids] == [(True, None)] * (
            counting.PAIRING_LIMIT
        ) + [(False, "repeated_pairing")]
        # Still provisional: on the player's page, not on the leaderboard.
        assert page["ratings"][0]["provisional"] is True and page["ratings"][0]["position"] is None
        board = client.get("/v1/leaderboards/nauticus?limit=500").get_json()
        assert not {ann, bob} & {e["player"] for e in board["entries"]}

        # A window later, the same pair counts again: more games, more than a day after
        # their first, and still nobody listed.
        clock.advance(seconds=counting.PAIRING_WINDOW_S)
        for i in range(lb.TRUST.games - counting.PAIRING_LIMIT):
            gid, actors = rated_table_game(app, client, pair)
            play_to_the_end(app, gid, actors, seed=20 + i)
            clock.advance(minutes=10)
    finally:
        games.now = with_now
    fold(ctx)
    page = client.get(f"/v1/players/{ann}").get_json()
    assert [(r["games"], r["provisional"], r["position"]) for r in page["ratings"]] == [(lb.TRUST.games, True, None)]
    # Games against no established opponent move no rating.
    assert page["ratings"][0]["rating"] == 0.0
    board = client.get("/v1/leaderboards/nauticus?limit=500").get_json()
    assert not {ann, bob} & {e["player"] for e in board["entries"]}
    assert board["total"] == len(board["entries"])

    # Live equals rebuild, byte for byte (the pairings' finish times included).
    live = leaderboard_keys(ctx.redis)
    lb.consume(ctx.redis, ctx.store, rebuild=True)
    assert leaderboard_keys(ctx.redis) == live
