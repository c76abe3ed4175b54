"""Shared fixtures.

Integration and end-to-end tests run against real PostgreSQL and Redis: the
servers named by ``DATABASE_URL`` / ``REDIS_URL`` (CI: the machine's own), or
embedded ones started for the session when those are unset.  Each test session
gets its own database (dropped at the end) and its own Redis database number
(flushed at start and end), so nothing is left behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from support.databases import fresh_settings

from service.config import Settings

#: The layer of a test is the folder it lives in (``tests/<layer>/...``):
#: ``pytest -m unit`` (or ``make test-layer LAYER=unit``) runs one layer.
LAYERS = (
    "unit", "scenario", "property", "integration", "e2e", "security", "fuzz", "faults", "load", "browser", "compose",
    "cluster", "ha",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "tests" in parts:
            i = len(parts) - 1 - parts[::-1].index("tests")
            if i + 1 < len(parts) and parts[i + 1] in LAYERS:
                item.add_marker(getattr(pytest.mark, parts[i + 1]))


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
    with fresh_settings(*servers) as made:
        yield made


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
    """Run queued projection jobs now, in-process, with the worker's own class in burst mode
    (RQ's plain ``SimpleWorker`` can take up to a minute to stop: workers/rq_worker.py)."""
    from rq import Queue

    from workers.rq_worker import ProjectionWorker

    def run() -> None:
        queue = Queue(settings.queue_name, connection=ctx.queue_redis)
        ProjectionWorker([queue], connection=ctx.queue_redis).work(burst=True, logging_level="WARNING")

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


@pytest.fixture(scope="module")
def private_redis_server(tmp_path_factory) -> Iterator[Any]:
    """A Redis server of the test module's own (``support.servers.RedisServer``): its
    command counts and databases are that module's alone, whatever else runs."""
    from support.servers import RedisServer

    server = RedisServer(tmp_path_factory.mktemp("private-redis"))
    server.start()
    yield server
    server.stop()
