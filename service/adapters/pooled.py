"""What every PostgreSQL-backed store shares: a connection from the pool,
within a bounded wait, or :class:`StoreUnavailable` (a clear 503, never a
request stuck on an exhausted pool).

A failover (docs/RELIABILITY.md, "Failover") is met here too.  ``DATABASE_URL``
may name several servers with ``target_session_attrs=read-write``: libpq
connects to whichever is the primary.  When one pooled connection is found
lost, or on a server that no longer takes writes (a demoted primary), every
connection made before it is retired (:meth:`ConnectionPool.drain`): they all
went to the same old primary, and each would otherwise fail one request
before the pool dropped it.  A read that failed that way is tried once more
on a new connection; a write is not (its outcome may be unknown: the caller
answers 503 and the client retries with its Idempotency-Key)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

#: What a server that is gone, restarting or no longer the primary raises: the
#: request answers 503 (``psycopg.OperationalError`` covers a lost connection, a
#: server shutting down or starting up; a demoted primary refuses writes with
#: ``ReadOnlySqlTransaction``).
DOWN: tuple[type[Exception], ...] = (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction)

#: Seconds between two drains of one pool: a failover fails many requests at
#: once, and one drain retires every connection of the old primary.
_DRAIN_EVERY = 1.0


class StoreUnavailable(Exception):
    """PostgreSQL cannot be reached (or the pool is exhausted, or no primary answers)."""

    #: The connection was found lost (and the pool's older ones retired): a read may be tried
    #: once more on a new one; a write may not (its outcome is unknown).
    lost: bool = False


class NoPrimary(StoreUnavailable):
    """The server reached takes no writes: a standby (``pg_is_in_recovery()``)."""


_drains: dict[int, float] = {}
_drains_lock = threading.Lock()


def retire_connections(pool: ConnectionPool, conn: psycopg.Connection | None, exc: BaseException) -> bool:
    """After ``exc`` on ``conn`` (given back to the pool): if the connection is lost or on
    a standby, retire every connection the pool made before now (at most once a second).
    True if the connection was lost (another one may well work)."""
    # A connection to a standby looks healthy: the pool would keep it, so it is retired too.
    standby = isinstance(exc, psycopg.errors.ReadOnlySqlTransaction)
    if not standby and (conn is None or (not conn.broken and not conn.closed)):
        return False  # the statement failed on a working server (a timeout, a cancel)
    now = time.monotonic()
    with _drains_lock:
        if now - _drains.get(id(pool), float("-inf")) >= _DRAIN_EVERY:
            _drains[id(pool)] = now
            pool.drain()
    return True


class Pooled:
    def __init__(self, pool: ConnectionPool, pool_timeout: float = 5.0):
        self.pool = pool
        self.pool_timeout = pool_timeout

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        """A pooled connection; a lost server or a standby is :class:`StoreUnavailable`."""
        conn = None
        try:
            with self.pool.connection(timeout=self.pool_timeout) as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreUnavailable(str(exc)) from exc
        except DOWN as exc:
            down = StoreUnavailable(str(exc))
            down.lost = retire_connections(self.pool, conn, exc)
            raise down from exc

    def _fetch(self, query: str, params: Sequence[Any]) -> list[tuple]:
        """The rows of one query, in a pooled connection of its own; tried once more
        on a new connection when the first was found lost (a failover, a restart)."""
        try:
            return self._fetch_once(query, params)
        except StoreUnavailable as exc:
            if not exc.lost:
                raise
        return self._fetch_once(query, params)

    def _fetch_once(self, query: str, params: Sequence[Any]) -> list[tuple]:
        with self._conn() as conn, conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(query, params)
            return cur.fetchall()

    def is_primary(self) -> None:
        """Raise :class:`NoPrimary` unless the server reached takes writes (a readiness check)."""
        if self._fetch("SELECT pg_is_in_recovery()", ())[0][0]:
            raise NoPrimary("the server reached is a standby")
