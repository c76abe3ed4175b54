"""``scripts.bench.inprocess``, the in-process A/B measure of docs/PERFORMANCE.md
("Running the benchmark"): every part runs a few rounds
against real servers (the machine's PostgreSQL, in a database of the script's own; a
private Redis, since the script empties the Redis DB it uses) and reports a CPU figure
per intent."""

from __future__ import annotations

import os

import psycopg
import pytest
import redis
from psycopg.conninfo import make_conninfo
from support.bench_runs import last_json_line


@pytest.mark.parametrize("part", ["api", "worker", "minimum", "api --limits"])
def test_each_part_measures_every_intent_it_sends(settings, private_redis_server, part):
    env = dict(
        os.environ,
        DATABASE_URL=make_conninfo(settings.database_url, dbname="postgres"),
        REDIS_URL=private_redis_server.url(),
        BENCH_REDIS_DB="3",
    )
    part, *flags = part.split()
    server = redis.Redis.from_url(private_redis_server.url())
    scripts_before = server.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
    db = f"qd_inprocess_{part}_{len(flags)}_{os.getpid()}"
    figure = last_json_line("scripts.bench.inprocess", "--part", part, *flags, "--rounds", "3", "--db", db, env=env)
    # 24 games, one intent (or the minimum's append) each per round, every one accepted
    # (a refusal stops the script).
    assert figure["part"] == part and figure["intents"] == 3 * 24
    assert figure["limits"] == bool(flags)
    if flags:
        # Limits on: each intent (10 warm-up rounds and 3 measured, 24 games) also ran the
        # limiter's script for its address and for its key, besides the nudge's.
        scripts = server.info("commandstats")["cmdstat_evalsha"]["calls"] - scripts_before
        assert scripts >= 3 * 13 * 24
    assert 0 < figure["us_per_intent"] < 1_000_000
    # Each intent costs PostgreSQL something (its append, or the catch-up's read).
    assert figure["postgres_us_per_intent"] > 0
    # The script's database is gone afterwards; its Redis DB is empty.
    with psycopg.connect(env["DATABASE_URL"], autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (db,)).fetchone()[0] == 0
    assert redis.Redis.from_url(private_redis_server.url(3)).dbsize() == 0


def test_the_domain_part_decides_every_planned_intent_without_servers():
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    figure = last_json_line("scripts.bench.inprocess", "--part", "domain", "--rounds", "3", env=env)
    # Every planned intent decided as planned (the script stops at the first that is not).
    assert figure["part"] == "domain" and figure["intents"] == 3 * 24
    assert figure["act_us_per_intent"] > 0 and figure["views_us_per_intent"] > 0
    assert abs(figure["act_us_per_intent"] + figure["views_us_per_intent"] - figure["us_per_intent"]) <= 0.2
