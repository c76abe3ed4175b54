"""Storage figures: ``pg_bytes_per_event`` (the ``events`` table
with its indexes, per event, for games played through the command path with
``make run``'s default clock), ``redis_bytes_per_active_game`` and
``redis_bytes_per_finished_game`` (``MEMORY USAGE`` of every key a game owns,
``projections/keys.py``: its one hash), and ``make backup`` / ``make restore``
time per million events.

As a phase of ``make bench`` (``--only storage``) it measures the bench
database as the earlier phases left it; alone::

    DATABASE_URL=... REDIS_URL=... .venv/bin/python -m scripts.bench.storage --events 200000

loads full games into a database of its own (``quarterdeck_bench_storage``,
dropped afterwards) up to ``--events``, then measures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from projections import keys
from projections.runner import project_game
from scripts.bench import plan as bench_plan
from service.adapters import backup
from service.service_layer.commands import GameService

KINDS = ("nauticus", "nautilus-industries", "waters-of-nereus")


def redis_bytes(ctx: Any, svc: GameService, say: Callable[[str], None], per_kind: int = 3) -> dict[str, Any]:
    """A few games of each kind, measured half-way (active) and at the end (finished)."""
    out: dict[str, Any] = {}
    active_all: list[int] = []
    finished_all: list[int] = []
    for kind in KINDS:
        active, finished, events = [], [], []
        for i in range(per_kind):
            plan = bench_plan.plan_game(kind, 2 + i % 3, 9000 + i)
            game = bench_plan.create(svc, plan)
            bench_plan.advance(ctx.store, game, len(plan.steps) // 2)
            project_game(ctx.redis, ctx.store, game.game_id)
            active.append(ctx.redis.memory_usage(keys.game(game.game_id), samples=0))
            bench_plan.advance(ctx.store, game, len(plan.steps))
            project_game(ctx.redis, ctx.store, game.game_id)
            finished.append(ctx.redis.memory_usage(keys.game(game.game_id), samples=0))
            events.append(game.version)
        out[kind] = {
            "active_bytes": active,
            "finished_bytes": finished,
            "events": events,
            "players": [2 + i % 3 for i in range(per_kind)],
        }
        active_all += active
        finished_all += finished
        say(
            f"  {kind}: active {statistics.mean(active):,.0f} B, finished {statistics.mean(finished):,.0f} B"
            f" (games of {min(events)}-{max(events)} events)"
        )
    out["active_mean"] = statistics.mean(active_all)
    out["finished_mean"] = statistics.mean(finished_all)
    return out


def pg_bytes(database_url: str, say: Callable[[str], None], intents: int = 400, clock: bool = True) -> dict[str, Any]:
    """PostgreSQL bytes per event: games of each kind (2, 3 and 4 players) played by random
    legal intents through ``GameService.submit`` (so every event carries the meta a real one
    does: intent, seat, arrival time and the default clock; ``clock=False``: games with no
    clock), in a database of their own, then ``events``' heap, TOAST and indexes (after
    VACUUM) divided by its rows."""
    import random

    from psycopg_pool import ConnectionPool

    from service.adapters.eventstore import EventStore
    from service.adapters.migrate import migrate
    from service.config import Settings

    name = f"{psycopg.conninfo.conninfo_to_dict(database_url)['dbname']}_bytes"
    admin = make_conninfo(database_url, dbname="postgres")
    url = make_conninfo(database_url, dbname=name)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    migrate(url)
    # make run's default clock: every decision's meta has one.
    deadline = Settings.default_deadline_s if clock else None
    out: dict[str, Any] = {"default_deadline_s": deadline}
    try:
        with ConnectionPool(url, min_size=1, max_size=2) as pool:
            svc = GameService(EventStore(pool), nudge=lambda _gid: None, default_deadline_s=deadline)
            for kind in KINDS:
                for players in (2, 3, 4):
                    created = svc.create_game(kind, [f"p{i}" for i in range(players)], {})
                    tokens = {s["seat"]: s["token"] for s in created["seats"]}
                    chooser = random.Random(players)
                    for n in range(intents):
                        loaded = svc.load(created["id"])
                        with loaded.lock:
                            svc.refresh(loaded)
                            if loaded.finished:
                                break
                            seat = chooser.choice(loaded.engine.to_act(loaded.state))
                            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
                        svc.submit(created["id"], tokens[seat], command, None, None, f"b{n}")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE events")
            events, total, heap, indexes = conn.execute(
                "SELECT count(*), pg_total_relation_size('events'), pg_relation_size('events'),"
                " pg_indexes_size('events') FROM events"
            ).fetchone()
            per_kind = conn.execute(
                "SELECT g.game, count(*), avg(pg_column_size(e.*))::int, count(e.meta)"
                " FROM events e JOIN games g USING (game_id) GROUP BY 1 ORDER BY 1"
            ).fetchall()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    out |= {
        "events": events,
        "bytes_per_event": total / max(events, 1),
        "heap_bytes_per_event": heap / max(events, 1),
        "index_bytes_per_event": indexes / max(events, 1),
        "per_kind": {k: {"events": n, "row_bytes": row, "rows_with_meta": m} for k, n, row, m in per_kind},
    }
    say(
        f"  {events:,} events: {out['bytes_per_event']:,.0f} B/event with indexes"
        f" (heap {out['heap_bytes_per_event']:,.0f}, indexes {out['index_bytes_per_event']:,.0f})"
    )
    return out


def backup_rate(database_url: str, say: Callable[[str], None]) -> dict[str, Any]:
    """``make backup`` then ``make restore`` (into a new database, dropped after) of the whole store."""
    with psycopg.connect(database_url) as conn:
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        db = conn.info.dbname
    target_name = f"{db}_restore"
    target = make_conninfo(database_url, dbname=target_name)
    admin = make_conninfo(database_url, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(target_name)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.qdb.gz"
        t = time.perf_counter()
        with path.open("wb") as f:
            backup.backup(database_url, f)
        backup_s = time.perf_counter() - t
        size = path.stat().st_size
        t = time.perf_counter()
        backup.check(path)
        check_s = time.perf_counter() - t
        t = time.perf_counter()
        backup.restore(target, path)
        restore_s = time.perf_counter() - t
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(target_name)))
    per_m = 1_000_000 / max(events, 1)
    out = {
        "events": events,
        "backup_s": backup_s,
        "check_s": check_s,
        "restore_s": restore_s,
        "file_bytes": size,
        "backup_s_per_million_events": backup_s * per_m,
        "restore_s_per_million_events": restore_s * per_m,
        "file_bytes_per_event": size / max(events, 1),
    }
    say(
        f"  {events:,} events: backup {backup_s:.1f}s, check {check_s:.1f}s, restore {restore_s:.1f}s,"
        f" {size / 1e6:.1f} MB ({out['file_bytes_per_event']:.0f} B/event);"
        f" per million events: backup {out['backup_s_per_million_events']:.0f}s,"
        f" restore {out['restore_s_per_million_events']:.0f}s"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--db", default="quarterdeck_bench_storage")
    ap.add_argument("--redis-db", type=int, default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    from scripts.bench.env import BenchEnv
    from service.bootstrap import bootstrap
    from service.config import Settings

    def say(msg: str) -> None:
        print(f"[load {os.getloadavg()[0]:4.1f}] {msg}", file=sys.stderr, flush=True)

    env = BenchEnv(os.environ["DATABASE_URL"], os.environ["REDIS_URL"], args.db, args.redis_db, args.keep)
    env.reset()
    with psycopg.connect(env.database_url, autocommit=True) as conn:
        conn.execute("DROP TABLE bench_insert")  # the bench's own table: not Quarterdeck's, a backup refuses it
    ctx = bootstrap(Settings(database_url=env.database_url, redis_url=env.redis_url))
    svc = GameService(ctx.store, nudge=lambda _gid: None)
    try:
        say("postgres bytes per event")
        figures: dict[str, Any] = {"pg": pg_bytes(env.database_url, say)}
        say("redis bytes per game")
        figures["redis"] = redis_bytes(ctx, svc, say)
        say(f"loading full games up to {args.events:,} events")
        plans = [bench_plan.plan_game(bench_plan.GAME, 2, 5000 + i) for i in range(4)]
        have, n, t = 0, 0, time.perf_counter()
        with psycopg.connect(env.database_url) as conn:
            have = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        while have < args.events:
            g = bench_plan.create(svc, plans[n % len(plans)])
            bench_plan.advance(ctx.store, g, len(g.plan.steps), snapshot=False)
            have += g.version
            n += 1
        say(f"  {n} games in {time.perf_counter() - t:.0f}s; {have:,} events")
        say("backup / restore")
        figures["backup"] = backup_rate(env.database_url, say)
    finally:
        ctx.close()
        env.close()
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
