"""A test session's databases: a new PostgreSQL database and a Redis database
number, made for the session (or for one test that needs its own) and
removed afterwards."""

from __future__ import annotations

import hashlib
import os
import secrets
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import redis
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from service.config import Settings

#: The operator token of every service the tests start.
ADMIN_TOKEN = "test-organiser-" + secrets.token_hex(8)


#: Redis database numbers the tests may use: 1-15 (0 is what `make run` uses).
_TEST_REDIS_DBS = list(range(1, 16))
#: What one test session needs: its own and three empty ones (``tests/integration/test_backup.py``).
_PER_SESSION = 4


def _xdist_worker() -> tuple[int, int] | None:
    """``(index, count)`` of this pytest-xdist worker, or None outside one."""
    name, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not (name.startswith("gw") and name[2:].isdigit() and count.isdigit()):
        return None
    return int(name[2:]), int(count)


def redis_dbs() -> list[int]:
    """The Redis database numbers this test process may use, its session's first.

    Outside pytest-xdist: ``QD_TEST_REDIS_DB`` first if set, else one drawn at
    random, then every other.  Under pytest-xdist (``make test`` runs the suite
    on several workers, each a test session of its own): each worker its own
    share of 1-15, disjoint from the others' (Redis databases are flushed at a
    session's start and end, and ``tests/integration/test_backup.py`` takes
    empty ones for its copies: two workers must never pick the same one).
    ``QD_TEST_REDIS_DB``, if set, is where the shares start; else a place drawn
    from the run's id, the same in every worker of one run, so that two runs
    side by side rarely share a database."""
    dbs, n = _TEST_REDIS_DBS, len(_TEST_REDIS_DBS)
    pinned = os.environ.get("QD_TEST_REDIS_DB")
    if pinned and int(pinned) not in dbs:
        raise RuntimeError(f"QD_TEST_REDIS_DB={pinned}: the tests use Redis databases 1-15")
    worker = _xdist_worker()
    if worker is None:
        first = int(pinned) if pinned else secrets.choice(dbs)
        return [first, *(db for db in dbs if db != first)]
    index, count = worker
    share = n // count
    if share < _PER_SESSION:
        raise RuntimeError(
            f"{count} pytest-xdist workers: at most {n // _PER_SESSION} share the tests' Redis databases"
        )
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    start = dbs.index(int(pinned)) if pinned else int(hashlib.sha256(run.encode()).hexdigest(), 16) % n
    return [dbs[(start + index * share + k) % n] for k in range(share)]


@contextmanager
def fresh_settings(database_url: str, redis_url: str, redis_db: int | None = None) -> Iterator[Settings]:
    """Settings pointing at a new database (dropped afterwards) and a Redis
    database number (flushed before and after): ``redis_db``, else the first
    of :func:`redis_dbs`."""
    name = f"qd_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    test_db = make_conninfo(database_url, dbname=name)
    if redis_db is None:
        redis_db = redis_dbs()[0]
    base = redis.Redis.from_url(redis_url)
    test_redis = base.connection_pool.connection_kwargs
    redis_test_url = f"redis://{test_redis.get('host', '127.0.0.1')}:{test_redis.get('port', 6379)}/{redis_db}"
    base.close()

    from service.adapters.migrate import migrate

    migrate(test_db)
    r = redis.Redis.from_url(redis_test_url)
    r.flushdb()
    try:
        yield Settings(
            database_url=test_db,
            redis_url=redis_test_url,
            admin_token=ADMIN_TOKEN,
            queue_name=f"qd-test-{name}",
            max_wait_seconds=3.0,
            snapshot_every=50,
            # In-process workers run in burst mode; a lingering drain job would
            # hold each run for its full linger (tests that want it set it).
            projection_linger=0.0,
            # More than one shard, so the suite crosses shards.
            projection_shards=2,
            # Functional tests are not throttled; the limits' own test
            # (tests/security/test_rate_limits.py) turns them on.
            rate_limits=False,
        )
    finally:
        r.flushdb()
        r.close()
        admin = make_conninfo(database_url, dbname=conninfo_to_dict(database_url).get("dbname") or "postgres")
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
