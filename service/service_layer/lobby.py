"""The lobby's use cases (docs/API.md "Tables"): open a table, join it, seat a
house bot, leave; the join that fills the last seat starts the game.

Each write is one unit of work: the table's SQL (``service.adapters.lobby``,
which locks the table's row, so joins of one table are serialised) and, when
the table is full, its game (``GameService.create_game(uow=...)``) and the
table marked started, all in one transaction: either both the last seat and
the game are recorded or neither, and a table starts once.  The game's
projection is nudged by the unit of work's committed hook, after the commit.

The seat order is drawn from the new game's committed seed
(``service.domain.pipeline.draw_seats``) and the join order is recorded in its
``GameCreated``, so the audit re-derives it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.adapters.lobby import OPEN, Lobby
from service.domain.errors import Forbidden, Refused
from service.domain.identity import Account
from service.games import registry
from service.games.base import RuleViolation
from service.games.rng import Rng
from service.service_layer.commands import GameService
from service.service_layer.unit_of_work import UnitOfWork


class LobbyService:
    def __init__(self, store: Lobby, games: GameService, uow: Callable[[], UnitOfWork]):
        self.store = store
        self.games = games
        self.uow = uow

    def open_table(
        self,
        account: Account,
        game: str,
        seats: int,
        options: dict[str, Any],
        rated: bool,
        clock: dict[str, Any] | None,
        join: bool | None,
    ) -> dict[str, Any]:
        """A new open table.  A player who opens a table sits at it; an
        organiser opens tables for others (``join`` false)."""
        join = (not account.is_organiser) if join is None else join
        if account.is_organiser and join:
            raise Refused("invalid_join", "An organiser opens tables for players and does not sit at them.")
        if not account.is_organiser and not join:
            raise Refused("invalid_join", "A player who opens a table sits at it ('join' must be true).")
        self._check_game(game, seats, options)
        with self.uow() as uow:
            table = self.store.open_table(uow.conn, account, game, seats, options, rated, clock, join)
            self._start_if_full(uow, table)
            uow.commit()
        return self.store.present(table)

    @staticmethod
    def _check_game(game: str, seats: int, options: dict[str, Any]) -> None:
        """Refuse at once a table whose game could never start (unknown game,
        player count, options), rather than at its last join."""
        try:
            engine = registry.get(game)
        except registry.UnknownGame:
            raise Refused("unknown_game", f"No game called {game!r}.", {"games": registry.names()}) from None
        if not engine.min_players <= seats <= engine.max_players:
            raise Refused(
                "invalid_player_count",
                f"{game} is played by {engine.min_players} to {engine.max_players} players, not {seats}.",
            )
        try:
            # The same check the start makes, with a throwaway seed.
            engine.setup(seats, options, Rng(bytes(32), domain=1))
        except RuleViolation as rv:
            raise Refused(rv.code, rv.message, rv.details) from None

    def join(self, table_id: str, account: Account) -> dict[str, Any]:
        """Sit at the table; the join that fills the last seat starts its game."""
        if account.is_organiser:
            raise Forbidden("player_key_required", "Only a player's key can join a table.")
        with self.uow() as uow:
            table = self.store.join(uow.conn, table_id, account)
            self._start_if_full(uow, table)
            uow.commit()
        return self.store.present(table)

    def seat_bot(self, table_id: str, caller: Account, bots: list[Account]) -> dict[str, Any]:
        """Seat a house bot at an open table (``Lobby.seat_bot`` says who may; ``bots``:
        those of the level asked for, the first free one sits); the seat that fills
        the table starts its game."""
        with self.uow() as uow:
            table = self.store.seat_bot(uow.conn, table_id, caller, bots)
            self._start_if_full(uow, table)
            uow.commit()
        return self.store.present(table)

    def leave(self, table_id: str, account: Account) -> dict[str, Any]:
        """Stand up from an open table (a player's table left empty is closed)."""
        with self.uow() as uow:
            table = self.store.leave(uow.conn, table_id, account)
            uow.commit()
        return self.store.present(table)

    def get(self, table_id: str) -> dict[str, Any]:
        return self.store.get(table_id)

    def list(
        self, status: str = OPEN, game: str | None = None, limit: int = 50, offset: int = 0, player: str | None = None
    ) -> list[dict]:
        return self.store.list(status, game, limit, offset, player)

    def _start_if_full(self, uow: UnitOfWork, table: dict[str, Any]) -> None:
        """Create the game of a table whose seats are all taken, in ``uow``'s
        transaction (its row is locked there), and mark the table started."""
        if table["status"] != OPEN or len(table["players"]) < table["seats"]:
            return
        organiser = self.store.creator_is_organiser(uow.conn, table)
        created = self.games.create_game(
            table["game"],
            list(table["players"]),
            dict(table["options"]),
            clock=table["clock"],
            uow=uow,
            draw=True,
            rated=bool(table["rated"]),
            accounts=[True] * len(table["players"]),
            created_by=table["created_by"] if organiser else None,
            table=table["id"],
        )
        self.store.started(uow.conn, table, created["id"])
