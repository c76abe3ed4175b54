"""Shared fixtures.

Integration and end-to-end tests run against real PostgreSQL and Redis: the
servers named by ``DATABASE_URL`` / ``REDIS_URL`` (CI: the machine's own), or
embedded ones started for the session when those are unset.  Each test session
gets its own database (dropped at the end) and its own Redis database number
(flushed at start and end), so nothing is left behind.
"""

from __future__ import annotations

import os
import secrets
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from service.config import Settings

#: The layer of a test is the folder it lives in (``tests/<layer>/...``):
#: ``pytest -m unit`` (or ``make test-layer LAYER=unit``) runs one layer.
LAYERS = ("unit", "scenario", "property", "integration", "e2e", "security", "fuzz", "faults", "load", "browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "tests" in parts:
            i = len(parts) - 1 - parts[::-1].index("tests")
            if i + 1 < len(parts) and parts[i + 1] in LAYERS:
                item.add_marker(getattr(pytest.mark, parts[i + 1]))


ADMIN_TOKEN = "test-organiser-" + secrets.token_hex(8)

# Servers the tests start as processes (gunicorn, workers, the soak) read the
# environment: no rate limits there either, unless a test sets its own.
os.environ.setdefault("QD_RATE_LIMITS", "off")


@pytest.fixture(scope="session")
def servers() -> Iterator[tuple[str, str]]:
    """(database_url, redis_url) of the servers the tests may use."""
    if os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL"):
        yield os.environ["DATABASE_URL"], os.environ["REDIS_URL"]
        return
    from devtools.devservices import dev_services

    with dev_services() as found:
        yield found.database_url, found.redis_url


@pytest.fixture(scope="session")
def settings(servers: tuple[str, str]) -> Iterator[Settings]:
    """Settings pointing at a fresh database and a private Redis DB number."""
    database_url, redis_url = servers
    name = f"qd_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    test_db = make_conninfo(database_url, dbname=name)
    # A private Redis database number (1-15; 0 is what `make run` uses), so
    # test sessions running side by side rarely share one.
    db_number = int(os.environ.get("QD_TEST_REDIS_DB") or 1 + secrets.randbelow(15))
    base = redis.Redis.from_url(redis_url)
    test_redis = base.connection_pool.connection_kwargs
    redis_test_url = f"redis://{test_redis.get('host', '127.0.0.1')}:{test_redis.get('port', 6379)}/{db_number}"
    base.close()

    from service.core.migrate import migrate

    migrate(test_db)
    r = redis.Redis.from_url(redis_test_url)
    r.flushdb()
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
    r.flushdb()
    r.close()
    admin = make_conninfo(database_url, dbname=conninfo_to_dict(database_url).get("dbname") or "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def app(settings: Settings):
    from service.http.app import create_app

    application = create_app(settings, TESTING=True)
    yield application
    application.extensions["quarterdeck"].store.pool.close()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def ctx(settings: Settings):
    """Worker-side connections (the same databases as the app)."""
    from service.bootstrap import bootstrap
    from workers import context

    c = bootstrap(settings)
    context.set_context(c)
    yield c
    context.set_context(None)
    c.close()


@pytest.fixture
def run_worker(ctx, settings: Settings):
    """Run queued projection jobs now, in-process (an RQ SimpleWorker in burst mode)."""
    from rq import Queue, SimpleWorker

    def run() -> None:
        queue = Queue(settings.queue_name, connection=ctx.redis)
        SimpleWorker([queue], connection=ctx.redis).work(burst=True, logging_level="WARNING")

    return run


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def new_game(client, run_worker):
    """Create a game over HTTP and project it; returns the create answer."""

    def make(game: str = "nautilus-industries", players: list[str] | None = None, **options: Any) -> dict:
        players = players or ["ann", "bob", "cy"]
        resp = client.post("/v1/games", json={"game": game, "players": players, "options": options})
        assert resp.status_code == 201, resp.get_json()
        run_worker()
        return resp.get_json()

    return make
