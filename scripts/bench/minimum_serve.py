"""The servers of the design's minimum (``make bench``, phase ``minimum``; the phase is
``scripts/bench/minimum.py``): what any implementation of Quarterdeck's data flow must do for
one intent, with none of the service's own work.

* ``make_app()`` (served by the same gunicorn set-up as the service, like the Flask baseline):
  ``POST /append/<game_id>`` reads a JSON body ``{"intent": ..., "expected_version": v}``,
  appends 2 or 3 event rows (2.67 on average: the bench's Nautilus Industries intents
  store 2.7) with the event store's own guarded multi-row INSERT (``insert_guarded``) into
  ``minimum_events``, a table made ``LIKE events`` (its columns, checks and indexes, and a
  foreign key to ``games``), each row's hash a SHA-256 over its data, then marks the game
  dirty in Redis in one script call (through the service's group commit, so one call
  carries the marks that arrived while the one before was in flight), and answers ``{"version": v + k}`` with 201.  No
  validation, no rules, no seat, no clock, no idempotency, no rate limits.
* ``worker()`` (``python scripts/bench/minimum_serve.py``): waits for a mark, takes the dirty
  games, reads their rows after its checkpoints (one query, the store's LATERAL shape),
  writes each game's version and new rows to its hash and announces it, in one
  ``MULTI`` (the checkpoint moves with the view), and lingers the service's gather
  (``QD_PROJECTION_GATHER``) before its next look, as the drain job does.  No fold, no
  views, no RQ.

Everything the service does on top of this only adds to it: its CPU per intent and its
rate bound what the service's can be on this machine (docs/PERFORMANCE.md, "What
bounds the targets")."""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

import orjson
import psycopg
import redis
from flask import Flask, request
from psycopg_pool import ConnectionPool

from service.adapters.eventstore import insert_guarded
from service.coalesce import Coalescer

TABLE = "minimum_events"
DIRTY, PENDING, WAKE = "min:dirty", "min:pending", "min:wake"
#: SADD the games; wake the worker unless a wake is already waiting for it.
MARK = """
if redis.call('SADD', KEYS[1], unpack(ARGV)) > 0 and redis.call('SET', KEYS[2], '1', 'NX') then
  redis.call('LPUSH', KEYS[3], '1')
end
return 1
"""
#: The worker's take: the marks after this one wake it again.
TAKE = "redis.call('DEL', KEYS[2]) return redis.call('SPOP', KEYS[1], 1000)"
READ = (
    "SELECT c.g::text, f.n, f.data FROM unnest(%s::uuid[], %s::int[]) AS c(g, after)"
    " CROSS JOIN LATERAL (SELECT max(e.seq) AS n, '[' || string_agg(e.data::text, ',') || ']' AS data"
    f" FROM (SELECT x.seq, x.data FROM {TABLE} x WHERE x.game_id = c.g AND x.seq > c.after ORDER BY x.seq) e"
    " HAVING count(*) > 0) f"
)


def events_per_append(version: int) -> int:
    """2, 3, 3, 2, 3, 3, ...: 2.67 events an append."""
    return 2 if version % 3 == 0 else 3


def make_app() -> Flask:
    pool = ConnectionPool(
        os.environ["DATABASE_URL"],
        min_size=int(os.environ.get("QD_PG_POOL_MIN") or 2),
        max_size=int(os.environ.get("QD_PG_POOL_MAX") or 10),
        open=False,
        kwargs={"autocommit": True},
    )
    pool.open(wait=False)
    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    script = r.register_script(MARK)
    # The service's own group commit (service/coalesce.py): the marks that arrive while
    # one is in flight go together in the next call, as the service's nudge does.
    mark: Coalescer[str] = Coalescer(lambda games: script(keys=[DIRTY, PENDING, WAKE], args=games))
    flask_app = Flask("bench_minimum")

    @flask_app.get("/healthz")
    def healthz() -> dict:
        return {"status": "ok", "pid": os.getpid()}

    @flask_app.post("/append/<game_id>")
    def append(game_id: str) -> tuple[dict, int]:
        body = request.get_json()
        version = int(body["expected_version"])
        k = events_per_append(version)
        data = orjson.dumps(body["intent"]).decode()
        meta = orjson.dumps({"received_at": time.time()}).decode()
        params: list[Any] = []
        for i in range(k):
            digest = hashlib.sha256(f"{game_id}:{version + 1 + i}:{data}".encode()).hexdigest()
            params += (game_id, version + 1 + i, "IntentApplied", 1, data, meta if i == 0 else None, digest)
        with pool.connection() as conn, conn.cursor() as raw:
            raw.execute(insert_guarded(k, table=TABLE), [*params, game_id, version])
            if raw.rowcount != k:
                return {"error": {"code": "version_conflict"}}, 409
        mark(game_id)
        return {"version": version + k}, 201

    return flask_app


def worker() -> None:
    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    take = r.register_script(TAKE)
    gather = float(os.environ.get("QD_PROJECTION_GATHER") or 0.002)
    checkpoints: dict[str, int] = {}
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        while True:
            if r.brpop([WAKE], timeout=1) is None:
                continue
            while games := [g.decode() for g in take(keys=[DIRTY, PENDING])]:
                afters = [checkpoints.get(g, 0) for g in games]
                rows = conn.execute(
                    READ, ("{" + ",".join(games) + "}", "{" + ",".join(map(str, afters)) + "}")
                ).fetchall()
                with r.pipeline(transaction=True) as pipe:
                    for game_id, version, data in rows:
                        pipe.hset(f"min:{{{game_id}}}", mapping={"version": version, "events": data})
                        pipe.publish(f"min:{{{game_id}}}:changed", version)
                    pipe.execute()
                for game_id, version, _ in rows:
                    checkpoints[game_id] = version
                if gather > 0:
                    time.sleep(gather)


if __name__ == "__main__":
    worker()
