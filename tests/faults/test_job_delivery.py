"""A projection job delivered twice, late, or out of order has no effect on
the result: at every point the read model equals a rebuild folded from the
stream up to the version it claims, its version never goes backwards, and once
the jobs have run it is at the stream's head.

Runs in-process against the session's PostgreSQL and Redis (real servers)."""

from __future__ import annotations

import random
import threading
import time

import pytest
from support import auth, project_job

from projections import keys
from projections.boards import dumps, info_from, is_finished, render_board_fields, stream_terms
from projections.runner import project_game
from service.adapters.eventstore import EventStore
from service.domain.replay import fold_stream
from service.games import registry


def expected(store: EventStore, game_id: str, version: int) -> dict[bytes, bytes]:
    """The read model a rebuild gives at ``version``."""
    events = store.read(game_id, upto=version)
    info = info_from(events, None)
    engine = registry.get(info["game"], info["rules_version"])
    state = fold_stream(engine, events)
    fields = render_board_fields(engine, info, state, version, is_finished(events, False), **stream_terms(events))
    fields["auth"] = dumps([h.hex() for h in store.secrets(game_id)[1]])
    return {k.encode(): v if isinstance(v, bytes) else str(v).encode() for k, v in fields.items()}


class LateStore:
    """An event store whose reads arrive late: the job reads, then stalls
    while other jobs move the read model on, then tries to write."""

    def __init__(self, store: EventStore, delay: float):
        self._store = store
        self.delay = delay

    def read(self, *args, **kwargs):
        events = self._store.read(*args, **kwargs)
        time.sleep(self.delay)
        return events

    def __getattr__(self, name: str):
        return getattr(self._store, name)


def _advance(client, game: dict, n: int, rng: random.Random) -> None:
    svc = client.application.extensions["quarterdeck"].games
    tokens = {s["seat"]: s["token"] for s in game["seats"]}
    for _ in range(n):
        loaded = svc.load(game["id"])
        with loaded.lock:
            svc.refresh(loaded)
            if loaded.finished:
                return
            engine = registry.get(loaded.record.game)
            seat = rng.choice(engine.to_act(loaded.state))
            intent = rng.choice(engine.legal(loaded.state, seat)).to_json()
        resp = client.post(f"/v1/games/{game['id']}/intents", json={"intent": intent}, headers=auth(tokens[seat]))
        assert resp.status_code == 201, resp.get_json()


@pytest.mark.parametrize("game_name", registry.names())
def test_duplicate_late_and_out_of_order_jobs(client, new_game, ctx, run_worker, game_name):
    game = new_game(game=game_name, players=["ann", "bob"])
    gid = game["id"]
    r, store = ctx.redis, ctx.store
    rng = random.Random(hash(game_name) % 1000)
    highest = 0

    def check() -> None:
        nonlocal highest
        model = r.hgetall(keys.game(gid))
        if not model:
            return
        version = int(model[b"version"])
        assert version >= highest, f"read model went back from {highest} to {version}"
        highest = version
        assert model == expected(store, gid, version)

    for _round in range(15):
        _advance(client, game, rng.randint(1, 3), rng)
        action = rng.choice(["lost", "once", "twice", "late", "late"])
        if action == "once":
            project_game(r, store, gid)
        elif action == "twice":
            project_game(r, store, gid)
            project_game(r, store, gid)
        elif action == "late":
            # A late job reads the stream now, stalls; meanwhile more intents
            # are accepted and an on-time job projects them; then the late job
            # tries to write what it folded.
            late = threading.Thread(target=project_game, args=(r, LateStore(store, 0.3), gid))
            late.start()
            time.sleep(0.05)
            _advance(client, game, 2, rng)
            project_game(r, store, gid)
            late.join()
        check()
    # Every job the service enqueued, in the order queued, long after the fact,
    # plus duplicates of the whole lot.
    run_worker()
    check()
    for _ in range(3):
        project_game(r, store, gid)
    check()
    assert highest == store.version(gid)


def test_jobs_for_a_finished_game_leave_every_read_model_alone(client, new_game, ctx, run_worker):
    """Duplicates and late jobs after the end: board and leaderboards stay."""
    from workers import jobs

    game = new_game(game="nauticus", players=["ann", "bob"])
    _advance(client, game, 10_000, random.Random(5))
    run_worker()
    for _ in range(2):
        project_job(ctx, game["id"])
    board = ctx.redis.hgetall(keys.game(game["id"]))
    boards = {k: ctx.redis.dump(k) for k in ctx.redis.scan_iter(match="lb:*")}
    for _ in range(3):
        project_job(ctx, game["id"])
        jobs.sweep()
    assert ctx.redis.hgetall(keys.game(game["id"])) == board
    assert {k: ctx.redis.dump(k) for k in ctx.redis.scan_iter(match="lb:*")} == boards
    assert board[b"status"] == b"finished"
