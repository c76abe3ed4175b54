"""``make bench``'s ``minimum`` phase (scripts/bench/minimum.py, minimum_serve.py) and
its ``limits`` phase (the intents' load with ``make run``'s rate limits on).  The minimum:
the design's minimum for an intent runs under the bench's gunicorn with its bare worker,
every append is accepted, every game is projected, its CPU is counted, and its ratio to the
Flask baseline becomes ``api_ratio_bound`` (docs/PERFORMANCE.md, "What each figure means").  Real
PostgreSQL (a database of the run's own) and a private Redis."""

from __future__ import annotations

import os

import psycopg
import pytest
import redis
from psycopg.conninfo import make_conninfo
from support.bench_runs import bench


def test_the_designs_minimum_is_measured_beside_the_baseline(settings, private_redis_server, tmp_path):
    db = f"qd_bench_minimum_{os.getpid()}"
    result, database_url = bench(
        settings, private_redis_server, tmp_path, "--only", "flask,minimum", "--db", db, "--redis-db", "2"
    )
    figures, details = result, result["details"]
    assert figures["minimum_intents_16"] > 0
    # Every append was accepted: the guard saw each game at the version its client held.
    assert details["minimum_intents_16"]["errors"] == {}
    cpu = details["cpu_ms_per_minimum_intent"]
    assert cpu["requests"] > 0 and figures["cpu_ms_per_minimum_intent"] > 0
    assert set(cpu["counted"]) == {"minimum", "minimum_worker", "postgres"}
    # The bare worker projected (it was waited for, and its CPU is in the figure).
    assert cpu["minimum_worker_ms_per_request"] > 0
    assert figures["api_ratio_bound"] == pytest.approx(figures["minimum_intents_16"] / figures["flask_insert_16"])
    # Run twice (before and after the api phase in a full run): the rate is the two runs'
    # mean, the CPU both runs' over both runs' requests.
    runs = details["minimum_intents_16"]["runs"]
    assert len(runs) == 2 and figures["minimum_intents_16"] == pytest.approx((runs[0]["rate"] + runs[1]["rate"]) / 2)
    cpu_runs = cpu["runs"]
    assert cpu["requests"] == cpu_runs[0]["requests"] + cpu_runs[1]["requests"]
    both = sum(r["value"] * r["requests"] for r in cpu_runs) / cpu["requests"]
    assert figures["cpu_ms_per_minimum_intent"] == pytest.approx(both)
    # The run's database is gone afterwards.
    with psycopg.connect(database_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (db,)).fetchone()[0] == 0


def test_the_rate_limited_load_runs_with_make_runs_limits_on(settings, private_redis_server, tmp_path):
    """Phase ``limits``: the API of ``api_intents_16`` with the rate limits on (raised
    amounts: nothing refused), so every intent is counted in Redis as in ``make run``."""
    db = f"qd_bench_limits_{os.getpid()}"
    database_url = make_conninfo(settings.database_url, dbname="postgres")
    try:
        result, _ = bench(
            settings, private_redis_server, tmp_path, "--only", "limits", "--db", db, "--redis-db", "4", "--keep"
        )
        assert result["api_intents_16_rate_limited"] > 0
        assert result["details"]["api_intents_16_rate_limited"]["errors"] == {}
        assert result["cpu_ms_per_intent_rate_limited"] > 0
        # The limits were on: the API counted its clients' windows in the bench's Redis DB.
        kept = redis.Redis.from_url(private_redis_server.url(4))
        assert kept.keys("qd:rl:*")
    finally:
        redis.Redis.from_url(private_redis_server.url(4)).flushdb()
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
