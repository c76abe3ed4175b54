"""Leaderboards against real PostgreSQL, Redis and RQ: concurrent finishes on
several app instances, live versus rebuild byte for byte, ties, duplicates,
late commits, and the HTTP pages."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest
from support import auth, command_of, enqueue_drain, project_job, wait_for_feed_horizon
from support.leaderboards import fast_forward, handles, quiet_service

from projections import leaderboards as lb
from projections.runner import project_game, rebuild_game
from schemas.games import contract
from service.domain.pipeline import GAME_FINISHED, finished_data, seal
from service.domain.records import NewEvent
from service.service_layer.commands import GameService, now_iso

# -- helpers ----------------------------------------------------------------


def fold_until(ctx, predicate, timeout: float = 20.0) -> None:
    """Run the consumer until ``predicate()`` holds.  A finish is only in the
    global feed once every older transaction has ended, and the PostgreSQL
    server is shared with other sessions, so the first pass may not see it."""
    deadline = time.monotonic() + timeout
    while True:
        lb.consume(ctx.redis, ctx.store)
        if predicate():
            return
        assert time.monotonic() < deadline, "leaderboards did not catch up"
        time.sleep(0.05)


def games_of(r, game: str, player: str) -> int:
    """Finished games of ``game`` counted for ``player`` (0 if none)."""
    raw = r.hget(lb.stats_key(game), player)
    return json.loads(raw)["games"] if raw else 0


def rebuild_leaderboards(ctx, game_ids: list[str]) -> None:
    """What ``rebuild_all`` does, limited to the boards of ``game_ids``: every
    leaderboard key dropped and folded again from the whole store.  (The
    session's database also holds other tests' deliberately malformed
    streams, which a rebuild of every board would trip over.)"""
    for gid in game_ids:
        rebuild_game(ctx.redis, ctx.store, gid)
    lb.consume(ctx.redis, ctx.store, rebuild=True)


def snapshot(r) -> dict[str, Any]:
    """Every leaderboard key's content, exactly (bytes and scores)."""
    out: dict[str, Any] = {}
    for key in sorted(r.scan_iter(match=lb.PREFIX + "*", count=1000)):
        kind = r.type(key)
        if kind == b"string":
            out[key] = r.get(key)
        elif kind == b"hash":
            out[key] = sorted(r.hgetall(key).items())
        elif kind == b"zset":
            out[key] = r.zrange(key, 0, -1, withscores=True)
        elif kind == b"list":
            out[key] = r.lrange(key, 0, -1)
        else:  # pragma: no cover
            raise AssertionError(f"unexpected key type {kind!r} for {key!r}")
    return out


def api_pages(client) -> dict[str, bytes]:
    """The raw bodies of every leaderboard page (and the summary)."""
    pages = {"/v1/leaderboards": client.get("/v1/leaderboards").data}
    for entry in client.get("/v1/leaderboards").get_json()["games"]:
        offset = 0
        while True:
            url = f"/v1/leaderboards/{entry['game']}?limit=7&offset={offset}"
            resp = client.get(url)
            assert resp.status_code == 200
            pages[url] = resp.data
            if offset + 7 >= resp.get_json()["total"]:
                break
            offset += 7
    return pages


def first_decisions(svc: GameService, created: dict[str, Any], seed: int = 0) -> None:
    """Random legal intents until every seat has made its first decision: a rated
    game counts only then (docs/LEADERBOARDS.md, "What counts")."""
    gid, chooser = created["id"], random.Random(seed)
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    decided: set[int] = set()
    while len(decided) < len(tokens):
        loaded = svc.load(gid)
        with loaded.lock:
            svc.refresh(loaded)
            assert not loaded.finished
            seat = loaded.engine.to_act(loaded.state)[0]
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        svc.submit(gid, tokens[seat], command, None, None, "")
        decided.add(seat)


@pytest.fixture
def listed_at_once(ctx, monkeypatch):
    """Every player established from the start, so ratings move and are listed from the
    first counted game (tests of ties and paging, not of trust); the leaderboards are
    folded again with the real rules after."""
    monkeypatch.setattr(lb, "TRUST", lb.Trust(games=0, opponents=0, after_s=0))
    yield
    monkeypatch.undo()
    lb.consume(ctx.redis, ctx.store, rebuild=True)


def append_finish(svc: GameService, gid: str, result: dict[str, Any], at: str | None = None) -> None:
    """Close a stream with a ``GameFinished`` carrying ``result`` (a result
    the engines rarely produce at random, such as ties); ``at``: its time."""
    loaded = svc.load(gid)
    # Only results the published schema allows: the API's game list shows them, and the schemathesis
    # test (tests/fuzz) checks that list against the schema when it shares the session's database.
    problems = contract(loaded.engine.name).result().validate(result)
    assert not problems, f"not a {loaded.engine.name} result: {problems}"
    with loaded.lock:
        svc.refresh(loaded)
        meta = {"intent_id": str(uuid.uuid4()), "seat": None, "received_at": at or now_iso(), "intent": None}
        data = finished_data(result, loaded.seed, loaded.last_hash)
        svc.store.append(
            gid,
            loaded.version,
            seal(loaded.seed, gid, loaded.version + 1, loaded.last_hash, [NewEvent(GAME_FINISHED, data, meta)]),
        )
        loaded.invalidate()


# -- tests ------------------------------------------------------------------
#: Mixed types; nautilus-industries (the longest game) with 2 players only.
MIX = ["nautilus-industries"] * 4 + ["nauticus"] * 8 + ["waters-of-nereus"] * 8


def test_twenty_games_finishing_concurrently_on_four_apps_equal_a_rebuild(settings, ctx, run_worker, client):
    from service.http.app import create_app

    started = time.perf_counter()
    svc = quiet_service(ctx.store)
    pool = handles("ann", "bob", "cy", "dee", "eve", "fay")
    chooser = random.Random(7)
    games = []
    for i, game in enumerate(MIX):
        players = chooser.sample(pool, 3 if i % 3 == 0 and game != "nautilus-industries" else 2)
        created = svc.create_game(game, players, {}, rated=True)
        games.append((created, fast_forward(svc, created, random.Random(i))))
    forwarded = time.perf_counter()

    # The 20 final intents land at once, from 20 threads on 4 app instances
    # (each with its own connection pool and command cache).
    apps = [create_app(settings, TESTING=True) for _ in range(4)]
    barrier = threading.Barrier(len(games))
    answers: list[int] = [0] * len(games)

    def finish(i: int) -> None:
        created, last = games[i]
        c = apps[i % len(apps)].test_client()
        barrier.wait()
        resp = c.post(
            f"/v1/games/{created['id']}/intents",
            json={"intent": last["intent"], "expected_version": last["version"]},
            headers=auth(last["token"]),
        )
        answers[i] = resp.status_code

    threads = [threading.Thread(target=finish, args=(i,)) for i in range(len(games))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a in apps:
        a.extensions["quarterdeck"].store.pool.close()
    assert answers == [201] * len(games)
    for created, _ in games:
        assert ctx.store.read(created["id"])[-1].type == GAME_FINISHED

    # Live: the queued projection jobs (each runs the leaderboard consumer
    # when its game is finished), plus every job once more from 4 threads at
    # the same time (duplicates racing on the cursor).
    run_worker()
    racers = [threading.Thread(target=lambda: [project_job(ctx, c["id"]) for c, _ in games]) for _ in range(4)]
    for t in racers:
        t.start()
    for t in racers:
        t.join()
    played = {
        (game, name): sum(s["player"] == name for c, _ in games if c["game"] == game for s in c["seats"])
        for game in set(MIX)
        for name in pool
    }
    fold_until(ctx, lambda: all(games_of(ctx.redis, g, p) >= n for (g, p), n in played.items()))
    lb.consume(ctx.redis, ctx.store)
    assert {k: games_of(ctx.redis, *k) for k in played} == played, "each finished game counted once"
    assert lb.consume(ctx.redis, ctx.store) == 0, "nothing left to fold"
    live_keys = snapshot(ctx.redis)
    live_pages = api_pages(client)

    rebuild_leaderboards(ctx, [c["id"] for c, _ in games])
    assert snapshot(ctx.redis) == live_keys
    assert api_pages(client) == live_pages
    elapsed = time.perf_counter() - started
    print(f"20 games: fast-forward {forwarded - started:.1f}s, total {elapsed:.1f}s")


def test_ties_share_the_rating_update_and_both_win(ctx, client, listed_at_once):
    svc = quiet_service(ctx.store)
    ann, bob, cy = handles("ann", "bob", "cy")
    created = svc.create_game("nauticus", [ann, bob, cy], {}, rated=True)
    first_decisions(svc, created)
    result = {
        "scores": {"0": 40, "1": 40, "2": 12},
        "ranks": {"0": 1, "1": 1, "2": 3},
        "ranking": [0, 1, 2],
        "breakdown": {},
        "tiebreak": "shared",
    }
    append_finish(svc, created["id"], result)
    fold_until(ctx, lambda: games_of(ctx.redis, "nauticus", cy) == 1)

    stats = {p: json.loads(ctx.redis.hget(lb.stats_key("nauticus"), p)) for p in (ann, bob, cy)}
    assert stats[ann]["mu"] == stats[bob]["mu"] and stats[ann]["sigma"] == stats[bob]["sigma"]
    assert float(stats[ann]["mu"]) > 25.0 > float(stats[cy]["mu"])
    assert [stats[p]["wins"] for p in (ann, bob, cy)] == [1, 1, 0]
    # Exactly openskill's Plackett-Luce update for ranks [1, 1, 3].
    teams = [[lb.model().rating()] for _ in range(3)]
    expected = lb.model().rate(teams, ranks=[1.0, 1.0, 3.0])
    assert stats[ann]["mu"] == lb.fixed(expected[0][0].mu, lb.STATE_DECIMALS)
    assert stats[cy]["sigma"] == lb.fixed(expected[2][0].sigma, lb.STATE_DECIMALS)

    page = client.get(f"/v1/players/{ann}").get_json()
    assert page["ratings"][0]["game"] == "nauticus" and page["ratings"][0]["wins"] == 1
    assert page["recent"][0]["game_id"] == created["id"]
    assert page["recent"][0]["rank"] == 1
    assert [p["rank"] for p in page["recent"][0]["players"]] == [1, 1, 3]
    board = client.get("/v1/leaderboards/nauticus?limit=500").get_json()
    names = [e["player"] for e in board["entries"]]
    # Equal ratings: ordered by handle; both ahead of the third player.
    assert names.index(ann) + 1 == names.index(bob) < names.index(cy)


def test_duplicate_and_racing_jobs_count_a_finish_once(ctx, run_worker, settings):
    from rq import Queue

    svc = quiet_service(ctx.store)
    ann, bob = handles("ann", "bob")
    created = svc.create_game("waters-of-nereus", [ann, bob], {}, rated=True)
    last = fast_forward(svc, created, random.Random(3))
    svc.submit(created["id"], last["token"], command_of(svc, created["id"], last["intent"]), last["version"], None, "")

    queue = Queue(settings.queue_name, connection=ctx.redis)
    for _ in range(3):
        enqueue_drain(ctx, queue, created["id"])
    run_worker()
    barrier = threading.Barrier(6)

    def race() -> None:
        barrier.wait()
        project_job(ctx, created["id"])
        lb.consume(ctx.redis, ctx.store)

    threads = [threading.Thread(target=race) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fold_until(ctx, lambda: games_of(ctx.redis, "waters-of-nereus", ann) >= 1)
    project_job(ctx, created["id"])
    lb.consume(ctx.redis, ctx.store)
    for p in (ann, bob):
        rec = json.loads(ctx.redis.hget(lb.stats_key("waters-of-nereus"), p))
        assert rec["games"] == 1
        assert len(ctx.redis.lrange(lb.recent_key(p), 0, -1)) == 1


def test_a_late_commit_is_folded_in_order_not_skipped(settings, ctx):
    """A transaction that began earlier holds the feed back: a game finished
    after it is not folded until it ends, so nothing can be skipped."""
    svc = quiet_service(ctx.store)
    ann, bob = handles("ann", "bob")
    first = svc.create_game("nauticus", [ann, bob], {}, rated=True)
    second = svc.create_game("nauticus", [ann, bob], {}, rated=True)
    first_decisions(svc, first)
    first_decisions(svc, second)
    done = {"scores": {"0": 1, "1": 2}, "ranks": {"0": 2, "1": 1}, "ranking": [1, 0], "breakdown": {}, "tiebreak": None}
    with psycopg.connect(settings.database_url) as held:
        held.execute("SELECT pg_current_xact_id()")  # takes an xid, stays open
        append_finish(svc, second["id"], done)
        lb.consume(ctx.redis, ctx.store)
        assert games_of(ctx.redis, "nauticus", ann) == 0, "folded past a running transaction"
    append_finish(svc, first["id"], done | {"ranks": {"0": 1, "1": 2}, "ranking": [0, 1]})
    fold_until(ctx, lambda: games_of(ctx.redis, "nauticus", ann) == 2)
    recent = [json.loads(x)["game_id"] for x in ctx.redis.lrange(lb.recent_key(ann), 0, -1)]
    assert recent == [first["id"], second["id"]], "newest (last committed) first"


def test_leaderboard_http_shapes_paging_and_errors(ctx, client, listed_at_once):
    svc = quiet_service(ctx.store)
    names = handles("p0", "p1", "p2", "p3")
    for k in range(3):
        created = svc.create_game("nautilus-industries", names, {}, rated=True)
        first_decisions(svc, created, seed=k)
        order = names[k:] + names[:k]
        ranks = {str(names.index(p)): i + 1 for i, p in enumerate(order)}
        scores = {s: 100 - 10 * r for s, r in ranks.items()}
        ranking = [names.index(p) for p in order]
        result = {"scores": scores, "ranks": ranks, "ranking": ranking, "breakdown": {}, "tiebreak": None}
        append_finish(svc, created["id"], result)
    fold_until(ctx, lambda: all(ctx.redis.hget(lb.stats_key("nautilus-industries"), p) for p in names))

    full = client.get("/v1/leaderboards/nautilus-industries?limit=500").get_json()
    assert full["game"] == "nautilus-industries" and full["total"] == len(full["entries"])
    ratings = [e["rating"] for e in full["entries"]]
    assert ratings == sorted(ratings, reverse=True), "best first"
    assert [e["position"] for e in full["entries"]] == list(range(1, full["total"] + 1))
    mine = [e for e in full["entries"] if e["player"] in names]
    assert {e["games"] for e in mine} == {3}
    p0 = next(e for e in mine if e["player"] == names[0])
    assert p0["wins"] == 1 and p0["best_score"] == 90 and p0["average_score"] == pytest.approx((90 + 60 + 70) / 3)
    # Paging walks the same order without gaps or repeats.
    paged: list[str] = []
    offset = 0
    while offset < full["total"]:
        page = client.get(f"/v1/leaderboards/nautilus-industries?limit=3&offset={offset}").get_json()
        paged += [e["player"] for e in page["entries"]]
        offset += 3
    assert paged == [e["player"] for e in full["entries"]]

    player = client.get(f"/v1/players/{names[0]}").get_json()
    assert [r["game"] for r in player["ratings"]] == ["nautilus-industries"]
    assert len(player["recent"]) == 3 and player["active_games"] == 0
    assert [g["rank"] for g in player["recent"]] == [3, 4, 1], "newest first"

    unknown = client.get("/v1/leaderboards/chess")
    assert unknown.status_code == 404 and unknown.get_json()["error"]["code"] == "game_type_not_found"
    nobody = client.get(f"/v1/players/{handles('nobody')[0]}")
    assert nobody.status_code == 404 and nobody.get_json()["error"]["code"] == "player_not_found"
    assert client.get("/v1/leaderboards/nauticus?limit=0").status_code == 422
    spec = client.get("/openapi.json").get_json()
    assert "/v1/leaderboards/{game}" in spec["paths"] and "/v1/players/{handle}" in spec["paths"]
    assert "LeaderboardOut" in json.dumps(spec["components"]["schemas"])


def test_rebuild_while_live_consumers_run_still_equals_a_clean_rebuild(ctx):
    """A rebuild racing live consumers: the cursor guards both, so the end
    state is the same as a rebuild alone."""
    svc = quiet_service(ctx.store)
    ann, bob, cy = handles("ann", "bob", "cy")
    for k in range(4):
        created = svc.create_game("nauticus", [ann, bob, cy], {}, rated=True)
        first_decisions(svc, created, seed=k)
        ranks = {"0": 1 + k % 3, "1": 1 + (k + 1) % 3, "2": 1 + (k + 2) % 3}
        scores = {s: 10 * r for s, r in ranks.items()}
        ranking = [int(s) for s in sorted(ranks, key=ranks.get)]
        append_finish(
            svc,
            created["id"],
            {"scores": scores, "ranks": ranks, "ranking": ranking, "breakdown": {}, "tiebreak": None},
            # A day apart: the same three players count every time (counting.PAIRING_WINDOW_S).
            at=f"2031-01-{k + 1:02d}T12:00:00.000000Z",
        )
    fold_until(ctx, lambda: json.loads(ctx.redis.hget(lb.stats_key("nauticus"), cy) or b'{"games":0}')["games"] == 4)
    stop = threading.Event()

    def live() -> None:
        while not stop.is_set():
            lb.consume(ctx.redis, ctx.store, batch=3)

    threads = [threading.Thread(target=live) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        lb.consume(ctx.redis, ctx.store, rebuild=True, batch=3)
    finally:
        stop.set()
        for t in threads:
            t.join()
    lb.consume(ctx.redis, ctx.store)
    raced = snapshot(ctx.redis)
    lb.consume(ctx.redis, ctx.store, rebuild=True)
    assert snapshot(ctx.redis) == raced


def test_boards_of_finished_games_are_projected(ctx):
    """Sanity: the board projection marks the fast-forwarded games finished,
    which is what triggers the leaderboard job in the worker."""
    svc = quiet_service(ctx.store)
    created = svc.create_game("nauticus", handles("ann", "bob"), {})
    last = fast_forward(svc, created, random.Random(11))
    svc.submit(created["id"], last["token"], command_of(svc, created["id"], last["intent"]), last["version"], None, "")
    project_game(ctx.redis, ctx.store, created["id"])
    assert ctx.redis.hget(f"g:{{{created['id']}}}", "status") == b"finished"


def test_the_leaderboards_read_of_the_feed_matches_the_full_feed(ctx):
    """``read_finished`` (what the consumer folds: no digests, the opening
    joined) gives, for every GameFinished of the full feed (``read_all``), the
    same cursor, data and finishing time, and the stream's first event."""
    svc = quiet_service(ctx.store)
    ids = []
    for seed in (21, 22):
        created = svc.create_game("nauticus", handles("ann", "bob"), {})
        last = fast_forward(svc, created, random.Random(seed))
        svc.submit(
            created["id"], last["token"], command_of(svc, created["id"], last["intent"]), last["version"], None, ""
        )
        ids.append(created["id"])
    wait_for_feed_horizon(ctx.settings.database_url)  # the feed holds both finishes
    full = [(c, e) for c, e in ctx.store.read_all(limit=100_000, types=[GAME_FINISHED]) if e.game_id in ids]
    lean = [row for row in ctx.store.read_finished(limit=100_000) if row.game_id in ids]
    assert len(full) == 2
    assert [(row.cursor, row.game_id, row.data, row.received_at) for row in lean] == [
        (c, e.game_id, e.data, e.meta["received_at"]) for c, e in full
    ]
    for row in lean:
        opening = ctx.store.read(row.game_id, upto=1)[0]
        assert (row.opening_type, row.opening) == (opening.type, opening.data)


def test_the_global_feed_orders_transaction_ids_as_numbers(settings):
    """Regression: ``read_all`` once sorted by the text of ``tx_id`` (the
    output column of the same name), so xid 10 came before xid 9 and a
    consumer's cursor jumped back, folding a game twice.  In a database of
    its own, because these hand-made rows are not a playable stream."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    from psycopg_pool import ConnectionPool

    from service.adapters.eventstore import EventStore
    from service.adapters.migrate import migrate

    name = f"qd_feed_{uuid.uuid4().hex[:8]}"
    url = make_conninfo(settings.database_url, dbname=name)
    admin = make_conninfo(settings.database_url, dbname=conninfo_to_dict(settings.database_url).get("dbname"))
    migrate(url)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            gid = uuid.uuid4()
            conn.execute(
                "INSERT INTO games (game_id, game, rules_version, players, options, seed_commitment, created_at)"
                " VALUES (%s, 'nauticus', '1', '[]', '{}', '', now())",
                (gid,),
            )
            conn.execute("INSERT INTO game_seeds (game_id, seed) VALUES (%s, %s)", (gid, bytes(32)))
            for seq, tx in enumerate(["9", "10", "100"], start=1):
                conn.execute(
                    "INSERT INTO events (game_id, seq, tx_id, type, data, meta, hash)"
                    " VALUES (%s, %s, %s::xid8, 'GameFinished', '{}', '{}', %s)",
                    (gid, seq, tx, bytes(32)),
                )
        with ConnectionPool(url, min_size=1, max_size=1) as pool:
            store = EventStore(pool)
            assert [c[0] for c, _ in store.read_all()] == ["9", "10", "100"]
            assert [c[0] for c, _ in store.read_all(after=("9", 1), types=["GameFinished"])] == ["10", "100"]
            assert [c[0] for c, _ in store.read_all(after=("10", 2), limit=1)] == ["100"]
            # The leaderboards' own read of the feed (GameFinished only) orders the same way.
            assert [row.cursor[0] for row in store.read_finished()] == ["9", "10", "100"]
            assert [row.cursor[0] for row in store.read_finished(after=("9", 1))] == ["10", "100"]
            assert [row.cursor[0] for row in store.read_finished(after=("9", 1), limit=1)] == ["10"]
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_feed_that_goes_backwards_is_refused():
    lb._check_order(("96498", 7), [("96498", 8), ("99456", 2), ("100115", 1)])
    with pytest.raises(RuntimeError, match="out of order"):
        lb._check_order(("99456", 2826), [("100115", 3290), ("96498", 354)])
    with pytest.raises(RuntimeError, match="out of order"):
        lb._check_order(("100115", 3290), [("100115", 3290)])
