"""The invitations' use cases (docs/API.md, "Consent"): an organiser invites,
each player accepts with its own key.

Each write is one unit of work over ``service.adapters.invitations``: the
accept that completes a pending game creates the game (under the id given out
at the invitation) in the same transaction, and its projection is nudged by
the unit of work's committed hook; a tournament's accept registers the account
first, so that if the tournament no longer registers, nothing is answered.

Seating and registration each go through one small function
(``accepts_automatically``, :meth:`InvitationService._start_game`,
:meth:`InvitationService._register`), so house bots and late registration can
hook in.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from service.adapters.invitations import GAME, TOURNAMENT, Invitations, accepts_automatically
from service.domain.identity import Account
from service.service_layer.commands import GameService
from service.service_layer.unit_of_work import UnitOfWork


class InvitationService:
    def __init__(
        self,
        store: Invitations,
        games: GameService,
        register: Callable[[str, str], Any],
        uow: Callable[[], UnitOfWork],
    ):
        """``register(tournament_id, handle)``: registers an account that consented."""
        self.store = store
        self.games = games
        self.register = register
        self.uow = uow

    # -- inviting -----------------------------------------------------------
    def invite_to_game(
        self,
        game: str,
        players: Sequence[Account],
        options: dict[str, Any],
        *,
        rated: bool,
        clock: dict[str, Any] | None,
        created_by: str | None,
        inviter: str,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """A pending game of ``players`` (seat order as given) and its invitations.
        Returns the pending game as ``GET /v1/games/{id}`` shows it, and the
        invitations made (one per account that does not accept automatically);
        with none to wait for, the game is created at once.  The game's terms are
        checked now (``GameService.check_terms``), not at the last accept."""
        _, clock = self.games.check_terms(game, len(players), clock, options)
        gid = uuid.uuid4()
        with self.uow() as uow:
            made = self.store.invite_to_game(
                uow.conn,
                gid,
                game,
                players,
                options,
                rated=rated,
                clock=clock,
                created_by=created_by,
                inviter=inviter,
            )
            if not made:
                self._start_game(uow, gid)
            uow.commit()
        return self.store.pending_game(str(gid)) or {}, made

    def invite_to_tournament(
        self, tournament_id: str, accounts: Sequence[Account], inviter: str
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """One invitation per account (an account already invited and not yet answering
        is not invited twice); those that accept automatically are registered at once.
        Returns the invitations made and the handles registered."""
        now = [a for a in accounts if accepts_automatically(a)]
        with self.uow() as uow:
            made = self.store.invite_to_tournament(
                uow.conn, tournament_id, [a for a in accounts if a not in now], inviter
            )
            uow.commit()
        for account in now:
            self._register(tournament_id, account.handle)
        return made, [a.handle for a in now]

    # -- answering ----------------------------------------------------------
    def answer(self, invitation_id: str, account: Account, accept: bool) -> dict[str, Any]:
        """Accept or decline one of ``account``'s own pending invitations."""
        with self.uow() as uow:
            taken = self.store.locked(uow.conn, invitation_id, account)
            if taken["kind"] == TOURNAMENT and accept:
                # Registered first: if the tournament no longer registers, nothing is answered.
                self._register(taken["target"], account.handle)
            if self.store.answer(uow.conn, invitation_id, taken, accept):
                self._start_game(uow, taken["target"])
            uow.commit()
        key = "game_id" if taken["kind"] == GAME else "tournament_id"
        status = "accepted" if accept else "declined"
        return {"id": invitation_id, "kind": taken["kind"], key: taken["target"], "status": status}

    def _start_game(self, uow: UnitOfWork, game_id: Any) -> None:
        """Create a pending game whose every account accepted, in ``uow``'s transaction."""
        pending = self.store.pending(uow.conn, game_id)
        self.games.create_game(
            pending["game"],
            list(pending["players"]),
            dict(pending["options"]),
            clock=pending["clock"],
            uow=uow,
            game_id=str(pending["game_id"]),
            accounts=[True] * len(pending["players"]),
            rated=bool(pending["rated"]),
            created_by=pending["created_by"],
            invited=True,
        )
        self.store.started(uow.conn, game_id)

    def _register(self, tournament_id: str, handle: str) -> None:
        """Register an account that consented (its accept, or automatically)."""
        self.register(tournament_id, handle)

    # -- reading ------------------------------------------------------------
    def pending_for(self, account: Account, limit: int = 100) -> list[dict[str, Any]]:
        """The account's pending, unexpired invitations, oldest first."""
        return self.store.pending_for(account, limit)

    def pending_game(self, game_id: str) -> dict[str, Any] | None:
        """A game that waits for its invitations, as ``GET /v1/games/{id}`` shows it."""
        return self.store.pending_game(game_id)
