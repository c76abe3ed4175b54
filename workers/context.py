"""Per-process connections for jobs, made on first use (never at import)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import redis
from psycopg_pool import ConnectionPool

from service.config import Settings
from service.eventstore import EventStore, check_if_idle


@dataclass
class Context:
    settings: Settings
    store: EventStore
    redis: redis.Redis

    def close(self) -> None:
        self.store.pool.close()
        self.redis.close()


_ctx: Context | None = None
_lock = threading.Lock()


def make_context(settings: Settings) -> Context:
    pool = ConnectionPool(
        settings.database_url,
        min_size=settings.pool_min,
        max_size=settings.pool_max,
        open=False,
        reconnect_timeout=0,
        check=check_if_idle,
        # Autocommit: a read is one round trip (no BEGIN, no COMMIT on return to
        # the pool); writes that need a transaction open one explicitly.
        kwargs={"autocommit": True},
    )
    pool.open(wait=False)
    store = EventStore(pool, settings.pool_timeout)
    return Context(settings, store, redis.Redis.from_url(settings.redis_url))


def get() -> Context:
    global _ctx
    with _lock:
        if _ctx is None:
            _ctx = make_context(Settings.from_env())
        return _ctx


def set_context(ctx: Context | None) -> None:
    """For tests and embedded workers: use these connections."""
    global _ctx
    with _lock:
        _ctx = ctx
