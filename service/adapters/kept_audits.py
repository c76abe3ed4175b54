"""Audits of finished games, computed once and kept (migration 0003,
``game_audits``).  A finished stream cannot change unless someone tampers
with the store; the operator (or the game's organiser) re-checks on demand.
Only passing reports are kept: a failure is computed again on each request,
so a passing re-check after a transient failure (Redis away) replaces it."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from service.adapters.pooled import Pooled, StoreUnavailable


class KeptAudits(Pooled):
    def get(self, game_id: str, version: int) -> dict[str, Any] | None:
        """The kept report of the game at ``version`` (its head), if any."""
        try:
            with self._conn() as conn:
                row = conn.execute(
                    "SELECT report, to_char(computed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
                    " FROM game_audits WHERE game_id = %s AND version = %s",
                    (uuid.UUID(game_id), version),
                ).fetchone()
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
        return None if row is None else row[0] | {"computed_at": row[1], "kept": True}

    def keep(self, game_id: str, version: int, report: dict[str, Any]) -> None:
        try:
            with self._conn() as conn:
                conn.execute(
                    "INSERT INTO game_audits (game_id, version, report) VALUES (%s, %s, %s)"
                    " ON CONFLICT (game_id) DO UPDATE SET version = excluded.version, report = excluded.report,"
                    " computed_at = now()",
                    (uuid.UUID(game_id), version, Jsonb(report)),
                )
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc

    def drop(self, game_id: str) -> None:
        try:
            with self._conn() as conn:
                conn.execute("DELETE FROM game_audits WHERE game_id = %s", (uuid.UUID(game_id),))
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
