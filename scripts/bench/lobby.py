"""What the lobby's list of open tables costs (docs/PERFORMANCE.md, "The lobby").

The open tables are one indexed PostgreSQL query, not a Redis read model.
This measures ``GET /v1/tables`` (a page of 50, newest first) with many open
tables, in process (the Flask test client, no HTTP), beside ``GET /v1/games``
(a page of 50 from the Redis game lists, the read model it would otherwise
be), and a join of a table (its row lock, the seat, the answer).

    DATABASE_URL=... REDIS_URL=... .venv/bin/python -m scripts.bench.lobby [--tables 1000]

Uses its own database (``qd_bench_lobby``, dropped at the end) and an empty
Redis DB given by ``--redis-db`` (default 12; it refuses a DB that holds
anything, and empties it again at the end).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid

import psycopg
import redis
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from service.adapters.migrate import migrate
from service.config import Settings
from service.http.app import create_app


def timed(fn, n: int) -> tuple[float, float]:
    """(median, p99) in milliseconds of ``n`` calls."""
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def main() -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--redis-db", type=int, default=12)
    ap.add_argument("--samples", type=int, default=300)
    args = ap.parse_args()
    base_url = os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres"
    database_url = make_conninfo(base_url, dbname="qd_bench_lobby")
    redis_url = (os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0").rsplit("/", 1)[0] + f"/{args.redis_db}"
    admin = make_conninfo(base_url, dbname=conninfo_to_dict(base_url).get("dbname") or "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS qd_bench_lobby WITH (FORCE)")
    if redis.Redis.from_url(redis_url).dbsize():
        print(f"bench_lobby: Redis DB {args.redis_db} is not empty; pick an empty one with --redis-db", file=sys.stderr)
        return 2
    migrate(database_url)
    app = create_app(Settings(database_url=database_url, redis_url=redis_url, rate_limits=False, max_open_tables=10**6))
    try:
        client = app.test_client()
        keys = []
        for i in range(40):
            resp = client.post("/v1/accounts", json={"handle": f"bench{i:03d}{uuid.uuid4().hex[:6]}"})
            keys.append(resp.get_json()["key"])
        started = time.perf_counter()
        for i in range(args.tables):
            key = keys[i % len(keys)]
            game = ("nauticus", "nautilus-industries", "waters-of-nereus")[i % 3]
            assert (
                client.post(
                    "/v1/tables", json={"game": game, "seats": 4}, headers={"Authorization": f"Bearer {key}"}
                ).status_code
                == 201
            )
        print(f"{args.tables} open tables made in {time.perf_counter() - started:.1f}s")
        for _ in range(50):
            client.post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]})
        from projections.runner import sweep

        components = app.extensions["quarterdeck"].components
        sweep(components.redis, components.store)
        lobby = timed(lambda: client.get("/v1/tables?limit=50"), args.samples)
        filtered = timed(lambda: client.get("/v1/tables?game=nauticus&limit=50"), args.samples)
        games = timed(lambda: client.get("/v1/games?limit=50"), args.samples)
        open_ids = [t["id"] for t in client.get("/v1/tables?limit=200").get_json()["tables"]]

        def join() -> None:
            tid = open_ids.pop()
            key = keys[(len(open_ids) * 7 + 3) % len(keys)]
            client.post(f"/v1/tables/{tid}/join", headers={"Authorization": f"Bearer {key}"})

        joins = timed(join, min(150, len(open_ids)))
        print(f"GET /v1/tables?limit=50 (PostgreSQL)          median {lobby[0]:6.2f} ms  p99 {lobby[1]:6.2f} ms")
        print(f"GET /v1/tables?game=nauticus&limit=50          median {filtered[0]:6.2f} ms  p99 {filtered[1]:6.2f} ms")
        print(f"GET /v1/games?limit=50 (Redis read model)      median {games[0]:6.2f} ms  p99 {games[1]:6.2f} ms")
        print(f"POST /v1/tables/{{id}}/join                     median {joins[0]:6.2f} ms  p99 {joins[1]:6.2f} ms")
    finally:
        app.extensions["quarterdeck"].store.pool.close()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS qd_bench_lobby WITH (FORCE)")
        redis.Redis.from_url(redis_url).flushdb()
    return 0


if __name__ == "__main__":
    sys.exit(main())
