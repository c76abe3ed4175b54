"""Tournament streams in PostgreSQL (migration 0007): thin, explicit SQL.

The same guarantees as the game store (``service.adapters.eventstore``): an
append writes at exactly ``expected_version + 1`` (one statement guarded by
the stream's head, and the primary key ``(tournament_id, seq)`` for two
writers racing), so a stream can neither fork nor gain a gap; the loser gets
:class:`~service.adapters.eventstore.Conflict`.  The seed is kept apart from the
stream.  Every method is one transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from service.adapters.eventstore import (
    Conflict,
    event_columns,
    event_params,
    insert_guarded,
    insert_plain,
    meta_before_query,
    param_rows,
    rows_to_events,
)
from service.adapters.pooled import Pooled, StoreUnavailable
from service.domain.records import START, Cursor, StoredEvent

_COLUMNS = event_columns("tournament_id", table="tournament_events", seeds="tournament_seeds")
_SELECT = f"SELECT {_COLUMNS} FROM tournament_events"
_INSERT = insert_plain("tournament_events", "tournament_id")
_META_BEFORE = meta_before_query("tournament_events", "tournament_id")


@dataclass(frozen=True, slots=True)
class TournamentRecord:
    """The row of ``tournaments``: what lists and rights need without a fold."""

    tournament_id: str
    name: str
    game: str
    organiser: str | None
    seed_commitment: str
    created_at: str


class TournamentStore(Pooled):
    # -- writing ----------------------------------------------------------------
    def create(self, record: TournamentRecord, seed: bytes, sealed: Sequence[StoredEvent]) -> None:
        """The tournament's row, its seed and its opening events, in one transaction."""
        tid = uuid.UUID(record.tournament_id)
        try:
            with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
                cur.execute(
                    "INSERT INTO tournaments (tournament_id, name, game, organiser, seed_commitment)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    (tid, record.name, record.game, record.organiser, record.seed_commitment),
                )
                cur.execute("INSERT INTO tournament_seeds (tournament_id, seed) VALUES (%s, %s)", (tid, seed))
                cur.executemany(_INSERT, param_rows(event_params(tid, sealed)))
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc

    def append(self, tournament_id: str, expected_version: int, sealed: Sequence[StoredEvent]) -> None:
        """Append ``sealed`` (numbered from ``expected_version + 1``) in one
        statement, only if the stream's head is still ``expected_version``."""
        tid = uuid.UUID(tournament_id)
        params = [*event_params(tid, sealed), tid, expected_version]
        query = insert_guarded(len(sealed), "tournament_events", "tournament_id")
        try:
            with self._conn() as conn, conn.cursor() as raw:
                raw.execute(query, params)
                if raw.rowcount != len(sealed):
                    raise Conflict(expected_version)
        except psycopg.errors.UniqueViolation as exc:
            raise Conflict(expected_version) from exc
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc

    # -- reading ----------------------------------------------------------------
    def record(self, tournament_id: str) -> TournamentRecord | None:
        rows = self._fetch(
            "SELECT tournament_id::text, name, game, organiser, seed_commitment,"
            " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
            " FROM tournaments WHERE tournament_id = %s",
            (uuid.UUID(tournament_id),),
        )
        return TournamentRecord(*rows[0]) if rows else None

    def seed(self, tournament_id: str) -> bytes | None:
        rows = self._fetch("SELECT seed FROM tournament_seeds WHERE tournament_id = %s", (uuid.UUID(tournament_id),))
        return bytes(rows[0][0]) if rows else None

    def read(self, tournament_id: str, after: int = 0) -> list[StoredEvent]:
        """The stream after ``after``, in order (bounded: 256 players and 20 rounds
        make at most a few thousand events)."""
        rows = self._fetch(
            _SELECT + " WHERE tournament_id = %s AND seq > %s ORDER BY seq", (uuid.UUID(tournament_id), after)
        )
        # StoredEvent's first field is named for games; here it holds the tournament id.
        return rows_to_events(rows, self._meta_before)

    def _meta_before(self, tournament_id: str, seq: int) -> dict[str, Any]:
        rows = self._fetch(_META_BEFORE, (uuid.UUID(tournament_id), seq))
        if not rows:
            raise LookupError(f"tournament {tournament_id}: no meta at or before seq {seq}")
        return rows[0][0]

    def ids(self, after: str | None = None, limit: int = 500) -> list[str]:
        """Every tournament id in id order, paged (for rebuilds)."""
        rows = self._fetch(
            "SELECT tournament_id::text FROM tournaments WHERE tournament_id > %s ORDER BY tournament_id LIMIT %s",
            (uuid.UUID(after) if after else uuid.UUID(int=0), limit),
        )
        return [r[0] for r in rows]

    def recent(self, limit: int = 10) -> list[str]:
        """The newest tournaments' ids, newest first (the home page; index ``tournaments_created``)."""
        rows = self._fetch("SELECT tournament_id::text FROM tournaments ORDER BY created_at DESC LIMIT %s", (limit,))
        return [r[0] for r in rows]

    def unfinished(self, limit: int = 500) -> list[str]:
        """Tournaments started and neither finished nor aborted: what the sweep
        advances (an abort aborts its games itself, and the job it enqueues again)."""
        rows = self._fetch(
            "SELECT t.tournament_id::text FROM tournaments t"
            " WHERE EXISTS (SELECT 1 FROM tournament_events s WHERE s.tournament_id = t.tournament_id"
            "   AND s.seq > 1 AND s.type = 'TournamentStarted')"
            " AND NOT EXISTS (SELECT 1 FROM tournament_events f WHERE f.tournament_id = t.tournament_id"
            "   AND f.type IN ('TournamentFinished', 'TournamentAborted'))"
            " ORDER BY t.created_at LIMIT %s",
            (limit,),
        )
        return [r[0] for r in rows]

    def feed_positions(self, after: Cursor = START, limit: int = 1000) -> list[tuple[Cursor, str, int]]:
        """``(cursor, tournament_id, seq)`` after ``after`` in commit order, only from
        transactions no earlier one can still join (as ``EventStore.feed_positions``)."""
        rows = self._fetch(
            "SELECT tx_id::text, position, tournament_id::text, seq FROM tournament_events"
            " WHERE (tx_id, position) > (%s::xid8, %s) AND tx_id < pg_snapshot_xmin(pg_current_snapshot())"
            " ORDER BY tournament_events.tx_id, tournament_events.position LIMIT %s",
            (after[0], after[1], limit),
        )
        return [((r[0], r[1]), r[2], r[3]) for r in rows]

    # -- the games of the tables --------------------------------------------------
    def link_game(self, conn: psycopg.Connection, game_id: str, tournament_id: str, round_: int, table: int) -> None:
        """Record which table a game plays, in ``conn``'s open transaction (the
        one that creates the game)."""
        conn.execute(
            "INSERT INTO tournament_games (game_id, tournament_id, round, table_no) VALUES (%s, %s, %s, %s)",
            (uuid.UUID(game_id), uuid.UUID(tournament_id), round_, table),
        )

    def tournaments_of(self, game_ids: Sequence[str]) -> dict[str, str]:
        """game id -> tournament id, for those of ``game_ids`` that a tournament plays."""
        if not game_ids:
            return {}
        rows = self._fetch(
            "SELECT game_id::text, tournament_id::text FROM tournament_games WHERE game_id = ANY(%s)",
            ([uuid.UUID(g) for g in game_ids],),
        )
        return {r[0]: r[1] for r in rows}

    def finished_games(self, game_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """game id -> its ``GameFinished`` data, for those of ``game_ids`` that have ended."""
        if not game_ids:
            return {}
        rows = self._fetch(
            # GameFinished closes a stream: one index probe per game, whatever its length.
            "SELECT g.id::text, e.data FROM unnest(%s::uuid[]) AS g(id) CROSS JOIN LATERAL"
            " (SELECT type, data FROM events WHERE game_id = g.id ORDER BY seq DESC LIMIT 1) AS e"
            " WHERE e.type = 'GameFinished'",
            ([uuid.UUID(g) for g in game_ids],),
        )
        return {r[0]: r[1] for r in rows}
