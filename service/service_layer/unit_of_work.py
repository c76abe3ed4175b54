"""The unit of work: one PostgreSQL transaction, and what to do once it has
committed (cosmicpython's ``UnitOfWork``).

A use case that writes several things atomically (a table's last seat and its
game, an invitation's last accept and its game, a tournament table's game and
its link) opens one, does its SQL through the adapters on :attr:`UnitOfWork.conn`,
and commits::

    with uow_factory() as uow:
        table = lobby.join(uow.conn, table_id, account)
        games.create_game(..., uow=uow)      # registers the game's nudge
        uow.commit()                         # COMMIT, then the callbacks

Leaving the block without :meth:`UnitOfWork.commit` (an error, or a refusal
raised midway) rolls back and drops the callbacks: what they tell the rest of
the system (the projections' nudge) is only ever something that committed.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from types import TracebackType

import psycopg
from psycopg_pool import ConnectionPool

from service.adapters.pooled import DOWN, StoreUnavailable, retire_connections


class UnitOfWork:
    """One transaction on a connection from ``pool`` (waited for at most
    ``pool_timeout`` seconds, else :class:`StoreUnavailable`), and its
    "committed" hook (:meth:`on_committed`)."""

    def __init__(self, pool: ConnectionPool, pool_timeout: float = 5.0) -> None:
        self.pool = pool
        self.pool_timeout = pool_timeout
        self._open: ExitStack | None = None
        self._transaction: psycopg.Transaction | None = None
        self._conn: psycopg.Connection | None = None
        self._committed: list[Callable[[], object]] = []

    @property
    def conn(self) -> psycopg.Connection:
        """The connection whose open transaction this is; inside the ``with`` block only."""
        if self._conn is None:
            raise RuntimeError("the unit of work is not open")
        return self._conn

    def __enter__(self) -> UnitOfWork:
        if self._open is not None:
            raise RuntimeError("the unit of work is open already")
        opened = ExitStack()
        conn = None
        try:
            conn = opened.enter_context(self.pool.connection(timeout=self.pool_timeout))
            # The pool's connections are in autocommit: this BEGINs (and a
            # conn.transaction() inside, an adapter's, is a savepoint in it).
            self._transaction = opened.enter_context(conn.transaction())
        except psycopg.OperationalError as exc:  # the pool's timeout too: a clear 503
            opened.close()
            retire_connections(self.pool, conn, exc)
            raise StoreUnavailable(str(exc)) from exc
        self._open, self._conn, self._committed = opened, conn, []
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        conn = self._conn
        self.rollback()
        if isinstance(exc, DOWN):
            # The server went away mid-transaction, or no longer takes writes (a
            # failover): a clear 503, as every store answers.
            retire_connections(self.pool, conn, exc)
            raise StoreUnavailable(str(exc)) from exc

    def on_committed(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once this unit of work has committed, after the
        COMMIT (so another connection sees what it wrote); never if it rolls back."""
        if self._open is None:
            raise RuntimeError("the unit of work is not open")
        self._committed.append(callback)

    def commit(self) -> None:
        """COMMIT and give the connection back, then run the callbacks in the order
        they were registered.  The unit of work is closed afterwards: what is left of
        its ``with`` block must not write."""
        conn = self._conn
        opened, callbacks = self._close()
        try:
            opened.close()  # leaves the transaction without an error: COMMIT
        except DOWN as exc:
            # The COMMIT's outcome is unknown (the server may have committed before it
            # went away): never reported as done; the client's retry with its
            # Idempotency-Key finds out.
            retire_connections(self.pool, conn, exc)
            raise StoreUnavailable(str(exc)) from exc
        for callback in callbacks:
            callback()

    def rollback(self) -> None:
        """ROLLBACK (if still open) and drop the callbacks."""
        if self._open is None:
            return
        transaction = self._transaction
        opened, _ = self._close()
        assert transaction is not None
        transaction.force_rollback = True
        # A rollback on a broken connection only warns (psycopg); the pool replaces it.
        opened.close()

    def _close(self) -> tuple[ExitStack, list[Callable[[], object]]]:
        if self._open is None:
            raise RuntimeError("the unit of work is not open")
        opened, callbacks = self._open, self._committed
        self._open, self._transaction, self._conn, self._committed = None, None, None, []
        return opened, callbacks
