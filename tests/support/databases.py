"""A test session's databases: a new PostgreSQL database and a Redis database
number, made for the session (or for one test that needs its own) and
removed afterwards."""

from __future__ import annotations

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


@contextmanager
def fresh_settings(database_url: str, redis_url: str, redis_db: int | None = None) -> Iterator[Settings]:
    """Settings pointing at a new database (dropped afterwards) and a Redis
    database number (flushed before and after): ``redis_db``, else
    ``QD_TEST_REDIS_DB``, else one drawn at random."""
    name = f"qd_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    test_db = make_conninfo(database_url, dbname=name)
    # A private Redis database number (1-15; 0 is what `make run` uses), so
    # test sessions running side by side rarely share one.
    if redis_db is None:
        redis_db = int(os.environ.get("QD_TEST_REDIS_DB") or 1 + secrets.randbelow(15))
    base = redis.Redis.from_url(redis_url)
    test_redis = base.connection_pool.connection_kwargs
    redis_test_url = f"redis://{test_redis.get('host', '127.0.0.1')}:{test_redis.get('port', 6379)}/{redis_db}"
    base.close()

    from service.core.migrate import migrate

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
