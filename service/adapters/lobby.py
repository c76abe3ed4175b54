"""The lobby's tables in PostgreSQL (docs/API.md "Tables"): the SQL of opening,
joining and leaving, on the connection of the caller's transaction; the use
case that starts a full table's game is ``service.service_layer.lobby``.

Tables live in PostgreSQL (migration 0003).  Every join and leave locks its
table's row (``SELECT ... FOR UPDATE``), so joins of one table are
serialised: of two players racing for the last seat one gets it and the
other finds the table full, and a table starts once (the caller starts its
game and marks it :meth:`Lobby.started` before its transaction commits).

Why PostgreSQL and not a Redis read model: a join must read the table's truth
under its lock anyway, and the lobby lists only open tables, through an index
(docs/API.md "Tables" gives the measurement).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from service.adapters.pooled import Pooled, StoreUnavailable
from service.adapters.rows import one
from service.domain import identity
from service.domain.errors import Conflicting, Forbidden, NotFound
from service.domain.identity import Account

OPEN, STARTED, CLOSED = "open", "started", "closed"
STATUSES = (OPEN, STARTED, CLOSED)

_COLUMNS = (
    "t.table_id::text AS id, t.game, t.seats, t.options, t.rated, t.clock, t.status, t.game_id::text AS game_id,"
    " t.created_by, t.creator_id::text AS creator_id,"
    " to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS created_at,"
    " coalesce((SELECT array_agg(s.handle ORDER BY s.joined) FROM lobby_seats s WHERE s.table_id = t.table_id),"
    " '{}') AS players"
)


def table_not_found() -> NotFound:
    return NotFound("table_not_found", "No such table.")


@dataclass(frozen=True, slots=True)
class Limits:
    #: Open tables a player may sit at, and an organiser may have opened, at once.
    open_tables_per_account: int = 10
    #: Tables with house bots a player's key (an organiser's) may have running at once.
    bot_games_per_account: int = 3
    bot_games_per_organiser: int = 50


class Lobby(Pooled):
    """The writes run on the connection given (the caller's transaction: a unit of
    work); the reads take a pooled connection of their own."""

    def __init__(self, pool: ConnectionPool, pool_timeout: float = 5.0, limits: Limits | None = None):
        super().__init__(pool, pool_timeout)
        self.limits = limits or Limits()

    # -- opening ---------------------------------------------------------------
    def open_table(
        self,
        conn: psycopg.Connection,
        account: Account,
        game: str,
        seats: int,
        options: dict[str, Any],
        rated: bool,
        clock: dict[str, Any] | None,
        join: bool,
    ) -> dict[str, Any]:
        """Record a new open table (``account`` sits at it if ``join``) in ``conn``'s
        transaction; the table as it stands."""
        table_id = uuid.uuid4()
        # One table at a time per account, so the cap below holds under a flood.
        conn.execute("SELECT 1 FROM accounts WHERE account_id = %s FOR UPDATE", (account.account_id,))
        self._check_cap(conn, account)
        conn.execute(
            "INSERT INTO lobby_tables (table_id, game, seats, options, rated, clock, status, created_by,"
            " creator_id) VALUES (%s, %s, %s, %s, %s, %s, 'open', %s, %s)",
            (
                table_id,
                game,
                seats,
                Jsonb(options),
                rated,
                Jsonb(clock) if clock is not None else None,
                account.handle,
                account.account_id,
            ),
        )
        if join:
            conn.execute(
                "INSERT INTO lobby_seats (table_id, account_id, handle) VALUES (%s, %s, %s)",
                (table_id, account.account_id, account.handle),
            )
        return self._read(conn, str(table_id))

    def _check_cap(self, conn: psycopg.Connection, account: Account) -> None:
        cap = self.limits.open_tables_per_account
        if account.is_organiser:
            sql = "SELECT count(*) FROM lobby_tables WHERE creator_id = %s AND status = 'open'"
        else:
            sql = (
                "SELECT count(*) FROM lobby_seats s JOIN lobby_tables t USING (table_id)"
                " WHERE s.account_id = %s AND t.status = 'open'"
            )
        n = one(conn.execute(sql, (account.account_id,)))[0]
        if n >= cap:
            raise Conflicting(
                "too_many_tables",
                f"An account may have at most {cap} open tables at once; leave one or wait for one to start.",
                {"open_tables": n, "limit": cap},
            )

    # -- joining and leaving -------------------------------------------------
    def join(self, conn: psycopg.Connection, table_id: str, account: Account) -> dict[str, Any]:
        """Seat a player at the table, its row locked until ``conn``'s transaction
        ends; the table as it stands (full, if this took its last seat)."""
        table = self._locked(conn, table_id)
        if self._sits_at(table, account.handle):
            raise Conflicting("already_seated", "You already sit at this table.")
        self._check_free_seat(table)
        # One join at a time per account, so the cap holds under a flood.
        conn.execute("SELECT 1 FROM accounts WHERE account_id = %s FOR UPDATE", (account.account_id,))
        self._check_cap(conn, account)
        conn.execute(
            "INSERT INTO lobby_seats (table_id, account_id, handle) VALUES (%s, %s, %s)",
            (table_id, account.account_id, account.handle),
        )
        table["players"] = [*table["players"], account.handle]
        return table

    @staticmethod
    def _sits_at(table: dict[str, Any], handle: str) -> bool:
        return any(identity.handle_key(p) == identity.handle_key(handle) for p in table["players"])

    @staticmethod
    def _check_free_seat(table: dict[str, Any]) -> None:
        """Refuse a seat at ``table`` unless it is open and has a free seat."""
        if table["status"] == CLOSED:
            raise Conflicting("table_closed", "This table was closed: everyone left it.")
        if table["status"] == STARTED or len(table["players"]) >= table["seats"]:
            # Its last seat went to someone else (whose join started it).
            raise Conflicting("table_full", "Every seat of this table is taken.", {"game_id": table["game_id"]})

    def seat_bot(self, conn: psycopg.Connection, table_id: str, caller: Account, bots: list[Account]) -> dict[str, Any]:
        """Seat a house bot at an open table (docs/API.md "House bots"), its row
        locked until ``conn``'s transaction ends: the table's owner or its organiser
        asks, with no invitation (a house bot plays whoever asks it).  ``bots``: the
        bots of the level asked for, by instance; the first not yet at the table sits.

        The bot's open seats are bounded by the caps of the one who seats it (an
        account has at most ``open_tables_per_account`` open tables, and at most
        ``bot_games_per_account`` tables with bots not yet finished), not by a cap of
        the bot's own: a house bot is shared, and one account must not be able to
        take every seat it has, nor keep the bots busy with games nobody plays."""
        table = self._locked(conn, table_id)
        if table["creator_id"] != caller.account_id:
            raise Forbidden("not_your_table", "Only the table's owner (or its organiser) may seat a house bot.")
        self._check_free_seat(table)
        free = [b for b in bots if not self._sits_at(table, b.handle)]
        if not free:
            raise Conflicting("already_seated", "Every house bot of this level already sits at this table.")
        if not self._has_bot(conn, table_id):
            # One table at a time per account, so the bound holds under a flood.
            conn.execute("SELECT 1 FROM accounts WHERE account_id = %s FOR UPDATE", (caller.account_id,))
            self._check_bot_games(conn, caller)
        bot = free[0]
        conn.execute(
            "INSERT INTO lobby_seats (table_id, account_id, handle) VALUES (%s, %s, %s)",
            (table_id, bot.account_id, bot.handle),
        )
        conn.execute("UPDATE lobby_tables SET bots_busy = true WHERE table_id = %s AND NOT bots_busy", (table_id,))
        table["players"] = [*table["players"], bot.handle]
        return table

    @staticmethod
    def _has_bot(conn: psycopg.Connection, table_id: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM lobby_seats s JOIN accounts a USING (account_id) WHERE s.table_id = %s AND a.kind = 'bot'"
            " LIMIT 1",
            (table_id,),
        ).fetchone()
        return row is not None

    def bot_games(self, conn: psycopg.Connection, account: Account) -> int:
        """The tables ``account`` opened that have a house bot and have not finished:
        open ones, and started ones whose game's last event is not ``GameFinished``.
        Those found closed or finished are unmarked (``bots_busy``) on the way, so the
        count reads an account's busy tables only, never its whole history."""
        rows = conn.execute(
            "SELECT t.table_id, t.status = 'open' OR (t.status = 'started' AND coalesce((SELECT e.type FROM events e"
            "   WHERE e.game_id = t.game_id ORDER BY e.seq DESC LIMIT 1), '') <> 'GameFinished')"
            " FROM lobby_tables t WHERE t.creator_id = %s AND t.bots_busy",
            (account.account_id,),
        ).fetchall()
        done = [table_id for table_id, busy in rows if not busy]
        if done:
            conn.execute("UPDATE lobby_tables SET bots_busy = false WHERE table_id = ANY(%s)", (done,))
        return len(rows) - len(done)

    def _check_bot_games(self, conn: psycopg.Connection, account: Account) -> None:
        cap = self.limits.bot_games_per_organiser if account.is_organiser else self.limits.bot_games_per_account
        n = self.bot_games(conn, account)
        if n >= cap:
            raise Conflicting(
                "too_many_bot_games",
                f"An account may have at most {cap} unfinished tables with house bots; finish or leave one.",
                {"bot_games": n, "limit": cap},
            )

    def leave(self, conn: psycopg.Connection, table_id: str, account: Account) -> dict[str, Any]:
        """Stand up from an open table.  A player's table that nobody sits at
        any more is closed."""
        table = self._locked(conn, table_id)
        if table["status"] == STARTED:
            raise Conflicting("table_started", "The game of this table has started; resign it instead.")
        if table["status"] == CLOSED:
            raise Conflicting("table_closed", "This table was closed: everyone left it.")
        gone = conn.execute(
            "DELETE FROM lobby_seats WHERE table_id = %s AND account_id = %s", (table_id, account.account_id)
        ).rowcount
        if not gone:
            raise Conflicting("not_at_table", "You do not sit at this table.")
        mine = identity.handle_key(account.handle)
        table["players"] = [p for p in table["players"] if identity.handle_key(p) != mine]
        creator_is_player = not self.creator_is_organiser(conn, table)
        if creator_is_player and self._nobody_but_bots(conn, table_id):
            conn.execute("UPDATE lobby_tables SET status = 'closed' WHERE table_id = %s", (table_id,))
            table["status"] = CLOSED
        return table

    def started(self, conn: psycopg.Connection, table: dict[str, Any], game_id: str) -> None:
        """Mark the table started with its game, in the transaction that created the game."""
        conn.execute(
            "UPDATE lobby_tables SET status = 'started', game_id = %s, started_at = now() WHERE table_id = %s",
            (game_id, table["id"]),
        )
        table["status"], table["game_id"] = STARTED, game_id

    # -- reading ---------------------------------------------------------------
    def get(self, table_id: str) -> dict[str, Any]:
        try:
            with self._conn() as conn:
                return self.present(self._read(conn, table_id))
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc

    def list(
        self, status: str = OPEN, game: str | None = None, limit: int = 50, offset: int = 0, player: str | None = None
    ) -> list[dict]:
        """Tables of one status, newest first (one indexed query); with ``player``, only
        those that account sits at (its seats by the ``lobby_seats_account`` index)."""
        sql = f"SELECT {_COLUMNS} FROM lobby_tables t WHERE t.status = %s"
        params: list[Any] = [status]
        if game is not None:
            sql += " AND t.game = %s"
            params.append(game)
        if player is not None:
            sql += (
                " AND t.table_id IN (SELECT s.table_id FROM lobby_seats s JOIN accounts a"
                " ON a.account_id = s.account_id WHERE a.handle_key = lower(%s))"
            )
            params.append(player)
        sql += " ORDER BY t.status, t.created_at DESC, t.table_id DESC LIMIT %s OFFSET %s"
        params += [limit, offset]
        try:
            with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
                return [self.present(row) for row in cur.execute(sql, params).fetchall()]
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc

    @staticmethod
    def present(table: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": table["id"],
            "game": table["game"],
            "seats": table["seats"],
            "options": table["options"],
            "players": list(table["players"]),
            "rated": table["rated"],
            "clock": table["clock"],
            "status": table["status"],
            "game_id": table["game_id"],
            "created_by": table["created_by"],
            "created_at": table["created_at"],
        }

    # -- inside the transaction ------------------------------------------------
    @staticmethod
    def _read(conn: psycopg.Connection, table_id: str, lock: bool = False) -> dict[str, Any]:
        try:
            tid = uuid.UUID(table_id)
        except ValueError:
            raise table_not_found() from None
        if lock:
            # Lock the row first (FOR UPDATE cannot go with the aggregate),
            # then read it with its seats: nothing can change in between.
            found = conn.execute("SELECT 1 FROM lobby_tables WHERE table_id = %s FOR UPDATE", (tid,)).fetchone()
            if found is None:
                raise table_not_found()
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(f"SELECT {_COLUMNS} FROM lobby_tables t WHERE t.table_id = %s", (tid,)).fetchone()
        if row is None:
            raise table_not_found()
        return row

    def _locked(self, conn: psycopg.Connection, table_id: str) -> dict[str, Any]:
        return self._read(conn, table_id, lock=True)

    @staticmethod
    def creator_is_organiser(conn: psycopg.Connection, table: dict[str, Any]) -> bool:
        """The table was opened by an organiser (who organises its game), not by a player."""
        row = conn.execute("SELECT kind FROM accounts WHERE account_id = %s", (table["creator_id"],)).fetchone()
        return row is not None and row[0] == identity.ORGANISER

    @staticmethod
    def _nobody_but_bots(conn: psycopg.Connection, table_id: str) -> bool:
        """Nobody sits at the table but house bots (or nobody at all): a player's
        table that its players left is closed, whatever bots sit at it."""
        row = one(
            conn.execute(
                "SELECT count(*) FROM lobby_seats s JOIN accounts a USING (account_id)"
                " WHERE s.table_id = %s AND a.kind <> 'bot'",
                (table_id,),
            )
        )
        return row[0] == 0
