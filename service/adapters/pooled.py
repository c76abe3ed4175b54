"""What every PostgreSQL-backed store shares: a connection from the pool,
within a bounded wait, or :class:`StoreUnavailable` (a clear 503, never a
request stuck on an exhausted pool)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout


class StoreUnavailable(Exception):
    """PostgreSQL cannot be reached (or the pool is exhausted)."""


class Pooled:
    def __init__(self, pool: ConnectionPool, pool_timeout: float = 5.0):
        self.pool = pool
        self.pool_timeout = pool_timeout

    def _conn(self) -> AbstractContextManager[psycopg.Connection]:
        try:
            return self.pool.connection(timeout=self.pool_timeout)
        except PoolTimeout as exc:
            raise StoreUnavailable(str(exc)) from exc

    def _fetch(self, query: str, params: Sequence[Any]) -> list[tuple]:
        """The rows of one query, in a pooled connection of its own."""
        try:
            with self._conn() as conn, conn.cursor(row_factory=tuple_row) as cur:
                cur.execute(query, params)
                return cur.fetchall()
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
