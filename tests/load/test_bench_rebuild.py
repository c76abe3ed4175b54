"""``make bench``'s ``rebuild`` phase (docs/PERFORMANCE.md, "What each figure means":
``rebuild_rate`` and the memory growth between its two sizes): it measures a store of
full games at the two sizes it names, in a database of its own, whatever the phases
before it left in the bench database.  Real PostgreSQL and a private Redis."""

from __future__ import annotations

import os

import psycopg
from psycopg.conninfo import make_conninfo
from support.bench_runs import bench


def test_the_rebuild_measures_its_two_sizes_in_a_store_of_its_own(settings, private_redis_server, tmp_path):
    db = f"qd_bench_rebuild_{os.getpid()}"
    admin = make_conninfo(settings.database_url, dbname="postgres")
    try:
        # After `api`, whose games stay in the bench database; kept, to be looked at.
        result, _ = bench(
            settings, private_redis_server, tmp_path, "--only", "api,rebuild", "--scale", "0.2", "--db", db, "--keep"
        )
        small, large = result["details"]["rebuild_rate"]["runs"]
        # 5,000 and 20,000 events (scale 0.2), loaded as whole games: each size reached, not
        # overshot by more than a game (a few thousand events).
        assert 5_000 <= small["events"] < 10_000
        assert 20_000 <= large["events"] < 25_000
        assert 0 < small["games"] < large["games"]
        assert result["rebuild_rate"] == large["rate"] > 0 and result["fold_ceiling"] > 0
        assert result["details"]["rebuild_rate"]["rss_growth"] == large["rss_mib"] / small["rss_mib"]
        # The store rebuilt held those games and nothing else: not the api phase's.
        with psycopg.connect(make_conninfo(admin, dbname=f"{db}_rebuild")) as conn:
            assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == large["events"]
        with psycopg.connect(make_conninfo(admin, dbname=db)) as conn:
            assert conn.execute("SELECT count(*) FROM events").fetchone()[0] > 0
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in (db, f"{db}_rebuild"):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
