"""An RQ worker killed with SIGKILL in the middle of a projection job: after a
new worker starts, every read model catches up and equals a rebuild."""

from __future__ import annotations

import random
import secrets
import time

import redis
import requests
from rq import Queue
from rq.registry import StartedJobRegistry
from support.bots import equals_rebuild, store_for
from support.servers import stack, wait_until

from service import nudge
from service.games import registry
from service.service_layer.commands import GameService


def _play_in_process(svc: GameService, game: str, intents: int, rng: random.Random) -> str:
    """A long stream written straight through the command side (no worker,
    no HTTP): the projection job that folds it from scratch takes long enough
    to be killed in the middle."""
    created = svc.create_game(game, ["ann", "bob"], {})
    gid = created["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    engine = registry.get(game)
    for _ in range(intents):
        loaded = svc.load(gid)
        with loaded.lock:
            svc.refresh(loaded)
            if loaded.finished:
                break
            seat = rng.choice(engine.to_act(loaded.state))
            intent = rng.choice(engine.legal(loaded.state, seat))
        svc.submit(gid, tokens[seat], intent, None, None, secrets.token_hex(8))
    return gid


def test_sigkill_mid_job_then_new_worker_catches_up_to_a_rebuild():
    with stack("fault-admin-" + secrets.token_hex(8), worker=False) as st, store_for(st.pg.url()) as store:
        r = redis.Redis.from_url(st.redis.url())
        svc = GameService(store, nudge=lambda gid: None)
        rng = random.Random(20)
        games = [_play_in_process(svc, "nautilus-industries", 400, rng) for _ in range(2)]
        games.append(_play_in_process(svc, "waters-of-nereus", 80, rng))
        queue = Queue(st.queue, connection=r)
        started = StartedJobRegistry(st.queue, connection=r)

        killed_mid_job = False
        for _attempt in range(5):
            r.flushdb()  # no read model, no queue: every job folds its game from scratch
            for gid in games:
                # One drain job per game, so that one is likely to be caught running.
                r.sadd(nudge.dirty(0), gid)
                queue.enqueue_call(nudge.DRAIN_JOB, args=(0,), result_ttl=0)
            worker = st.service.start_worker()
            deadline = time.monotonic() + 60
            while not started.get_job_ids() and time.monotonic() < deadline:
                time.sleep(0.002)
            st.service.kill_worker(worker)
            heads = {gid: store.version(gid) for gid in games}
            projected = {gid: int(r.hget(f"g:{{{gid}}}", "version") or 0) for gid in games}
            if started.get_job_ids() and any(projected[g] < heads[g] for g in games):
                killed_mid_job = True
                break
        assert killed_mid_job, "could not catch a projection job running in 5 attempts"
        assert any(projected[g] < heads[g] for g in games)

        st.service.start_worker()
        # No manual step: the new worker's jobs and periodic sweep catch up.
        wait_until(lambda: all(int(r.hget(f"g:{{{g}}}", "version") or 0) == heads[g] for g in games), 60, "catch-up")
        for gid in games:
            answer = requests.get(f"{st.service.url}/v1/games/{gid}", timeout=10).json()
            assert answer["version"] == heads[gid]
            assert equals_rebuild(r, store, gid), gid
        r.close()
