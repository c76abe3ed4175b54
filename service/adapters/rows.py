"""``fetchone()`` for a query that always answers one row.

An aggregate (``count(*)``, ``max(...)``), ``SELECT EXISTS``, a server function, or a row the
caller holds a lock on: psycopg types ``fetchone()`` as "a row or ``None``", and these never
answer ``None``.
"""

from __future__ import annotations

from typing import TypeVar

import psycopg

RowT = TypeVar("RowT")


def one(cursor: psycopg.Cursor[RowT]) -> RowT:
    """The row of ``cursor``'s query, which always answers one."""
    row = cursor.fetchone()
    assert row is not None, "a query that always answers a row answered none"
    return row
