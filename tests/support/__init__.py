"""Helpers for tests that play games over HTTP (Flask test client)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from projections.runner import project_game


def wait_for_feed_horizon(database_url: str, seconds: float = 15.0) -> None:
    """Wait until the global feeds hold every event of this database.  They stop
    short of any transaction still open anywhere in the PostgreSQL cluster
    (docs/DEVELOPING.md, "The global feed and the late-commit gap"), and another
    test process may hold one a moment: a test that needs one sweep to read to
    the end waits for that horizon to pass its database's last event first."""
    import psycopg

    deadline = time.monotonic() + seconds
    with psycopg.connect(database_url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT greatest((SELECT max(tx_id) FROM events), (SELECT max(tx_id) FROM tournament_events))"
                " >= pg_snapshot_xmin(pg_current_snapshot())"
            ).fetchone()
            if not (row and row[0]):
                return
            assert time.monotonic() < deadline, "a transaction stayed open in the cluster"
            time.sleep(0.1)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play(
    client: Any,
    ctx: Any,
    created: dict[str, Any],
    chooser: random.Random,
    max_intents: int = 50_000,
    stop_after: int | None = None,
) -> int:
    """Play ``created`` (a create answer) by following ``/legal`` only, as a
    third-party client would, projecting synchronously after each intent.
    Stops at the end of the game or after ``stop_after`` intents.  Returns the
    number of intents posted."""
    gid = created["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    project_game(ctx.redis, ctx.store, gid)
    posted = 0
    while posted < max_intents and (stop_after is None or posted < stop_after):
        game = client.get(f"/v1/games/{gid}").get_json()
        if game["status"] == "finished":
            return posted
        seat = chooser.choice(game["to_act"])
        legal = client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[seat])).get_json()
        assert legal["intents"], f"seat {seat} is to act but has no legal intent"
        intent = chooser.choice(legal["intents"])
        resp = client.post(
            f"/v1/games/{gid}/intents",
            json={"intent": intent, "expected_version": legal["version"]},
            headers=auth(tokens[seat]),
        )
        assert resp.status_code == 201, (intent, resp.get_json())
        posted += 1
        project_game(ctx.redis, ctx.store, gid)
    if stop_after is None:
        raise AssertionError(f"game {gid} did not end within {max_intents} intents")
    return posted


def play_fast(
    app: Any,
    created: dict[str, Any],
    seed: int = 0,
    stop_after: int | None = None,
    *,
    intent_prefix: str,
    pause: float = 0,
) -> int:
    """Play ``created`` (a create answer) in-process through the app's game
    service, skipping HTTP and projections, with random legal commands from
    ``random.Random(seed)``.  Stops at the end of the game or after
    ``stop_after`` intents, sleeping ``pause`` seconds after each one (so a
    live reader sees the game grow).  Intent ids are ``intent_prefix`` + a
    counter.  Returns the number of intents posted."""
    games = app.extensions["quarterdeck"].games
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    chooser = random.Random(seed)
    posted = 0
    while stop_after is None or posted < stop_after:
        loaded = games.load(created["id"])
        with loaded.lock:
            games.refresh(loaded)
            if loaded.finished:
                return posted
            seat = chooser.choice(loaded.engine.to_act(loaded.state))
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        games.submit(created["id"], tokens[seat], command, None, None, f"{intent_prefix}{posted}")
        posted += 1
        if pause:
            time.sleep(pause)
    return posted


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app on a real loopback socket (threaded), for clients that need
    one (streaming feeds, the example HTTP client); yields its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with projecting(app.extensions["quarterdeck"].components):
            yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


@contextmanager
def projecting(components: Any, every: float = 0.01) -> Iterator[None]:
    """A projector beside a served app, as ``make run``'s worker is: a thread
    running the drain job of every shard in turn (the job RQ would run; RQ's
    worker itself only runs in a main thread)."""
    from workers import context, jobs

    stop = threading.Event()
    previous = context._ctx
    if previous is None:
        context.set_context(components)

    def loop() -> None:
        while not stop.is_set():
            for shard in range(components.settings.projection_shards):
                jobs.drain(shard)
            stop.wait(every)

    thread = threading.Thread(target=loop, daemon=True, name="test-projector")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)
        if previous is None:
            context.set_context(None)


def project_job(ctx: Any, game_id: str) -> int:
    """What the worker does for a commit of ``game_id``, run in this thread:
    mark the game dirty and run its shard's drain job.  Calling it again is a
    duplicate (or late) job."""
    from service import nudge
    from workers import jobs

    shard = nudge.shard_of(game_id, ctx.settings.projection_shards)
    ctx.nudge.put_back(shard, [game_id])
    return jobs.drain(shard)


def enqueue_drain(ctx: Any, queue: Any, game_id: str) -> None:
    """Mark ``game_id`` dirty and enqueue its shard's drain job regardless of
    the coalescing flag (a duplicate job, as a retried enqueue would make)."""
    from service import nudge

    shard = nudge.shard_of(game_id, ctx.settings.projection_shards)
    ctx.nudge.put_back(shard, [game_id])
    queue.enqueue_call(nudge.DRAIN_JOB, args=(shard,), result_ttl=0)


def finished_and_running(
    app: Any,
    ctx: Any,
    seed: int,
    prefix: str,
    running_game: str,
    running_seed: int,
    stop_after: int,
    finished: list[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """A finished two-player game of every kind (keyed by game; ``finished``: of
    those kinds only) and a running game of ``running_game`` (key ``"running"``),
    all projected: what the pages' tests look at."""
    from service.games import registry

    client = app.test_client()
    out: dict[str, dict[str, Any]] = {}
    for i, game in enumerate(registry.names()):
        if finished is not None and game not in finished:
            continue  # a random game of Nautilus Industries is thousands of intents
        created = client.post("/v1/games", json={"game": game, "players": ["ann", "bob"]}).get_json()
        play_fast(app, created, seed=seed + i, intent_prefix=f"{prefix}-{i}-")
        project_game(ctx.redis, ctx.store, created["id"])
        out[game] = created
    running = client.post("/v1/games", json={"game": running_game, "players": ["cy", "dee"]}).get_json()
    play_fast(app, running, seed=running_seed, stop_after=stop_after, intent_prefix=f"{prefix}-running-")
    project_game(ctx.redis, ctx.store, running["id"])
    out["running"] = running
    return out


def command_of(games: Any, game_id: str, intent: Any) -> Any:
    """An intent's JSON as the command ``games.submit`` takes, parsed as the edge parses it."""
    from schemas.intents import parse_intent

    return parse_intent(games.game_of(game_id), intent)
