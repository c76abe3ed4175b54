"""Invitations in PostgreSQL: an organiser invites, each player accepts with its
own key (docs/API.md, "Consent"; migration ``0013_invitations.sql``).  The writes
run on the connection of the caller's transaction; the use cases that start a
completed game and register an accepted player are
``service.service_layer.invitations``.

* An organiser's game of accounts (``"accounts": true``) is a **pending game**
  (``"status": "invited"``) and one invitation per account.  The accept that
  completes it creates the game (under the id given out at the invitation) in
  the same transaction; a decline ends it (``"declined"``), and the others'
  invitations are cancelled.
* A tournament registration by handles is one invitation per account; accepting
  it registers the account, as its own ``{}`` registration would.
* Every invitation expires ``ttl`` seconds after it was made: after that it is
  listed nowhere and cannot be accepted (``invitation_expired``); a pending game
  none of whose invitations can complete any more reads ``"expired"``.
* An inviter has at most ``max_pending`` invitations pending at once
  (``too_many_invitations``): what one organiser key can make the store hold.

Who needs no invitation is said in one small function
(:func:`accepts_automatically`), so house bots and late registration can hook in.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from service.adapters.pooled import Pooled
from service.adapters.rows import one
from service.domain.errors import Conflicting, NotFound, Refused
from service.domain.identity import BOT, Account

GAME = "game"
TOURNAMENT = "tournament"

INVITED, STARTED, DECLINED, EXPIRED = "invited", "started", "declined", "expired"


def accepts_automatically(account: Account) -> bool:
    """An account that needs no invitation: it is seated or registered at once.
    The house bots: the operator's own accounts, which play whoever seats them
    (docs/BOTS.md, "House bots")."""
    return account.kind == BOT


def invitation_not_found() -> NotFound:
    return NotFound("invitation_not_found", "No pending invitation of this account has this id.")


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Invitations(Pooled):
    """The writes run on the connection given (the caller's transaction: a unit of
    work); the reads take a pooled connection of their own."""

    def __init__(self, pool: Any, pool_timeout: float = 5.0, *, ttl_s: int = 86400, max_pending: int = 200):
        super().__init__(pool, pool_timeout)
        self.ttl_s = ttl_s
        self.max_pending = max_pending

    # -- inviting -----------------------------------------------------------
    def _check_cap(self, conn: psycopg.Connection, inviter: str, adding: int) -> None:
        # One inviter at a time past this point, so the cap holds under concurrent requests.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('invitations:' || %s))", (inviter.lower(),))
        (pending,) = one(
            conn.execute(
                "SELECT count(*) FROM invitations WHERE invited_by = %s AND status = 'pending' AND expires_at > now()",
                (inviter,),
            )
        )
        if pending + adding > self.max_pending:
            raise Refused(
                "too_many_invitations",
                f"At most {self.max_pending} invitations may be pending at once; wait for answers or expiry.",
                {"pending": pending, "max": self.max_pending},
            )

    def _insert(
        self, conn: psycopg.Connection, kind: str, target: uuid.UUID, accounts: Sequence[Account], inviter: str
    ) -> list[dict[str, Any]]:
        out = []
        for account in accounts:
            iid = uuid.uuid4()
            conn.execute(
                "INSERT INTO invitations (invitation_id, kind, target_id, account_id, handle, invited_by, status,"
                " expires_at) VALUES (%s, %s, %s, %s, %s, %s, 'pending', now() + make_interval(secs => %s))",
                (iid, kind, target, uuid.UUID(account.account_id), account.handle, inviter, self.ttl_s),
            )
            out.append({"id": str(iid), "player": account.handle, "status": "pending"})
        return out

    def invite_to_game(
        self,
        conn: psycopg.Connection,
        game_id: uuid.UUID,
        game: str,
        players: Sequence[Account],
        options: dict[str, Any],
        *,
        rated: bool,
        clock: dict[str, Any] | None,
        created_by: str | None,
        inviter: str,
    ) -> list[dict[str, Any]]:
        """Record a pending game of ``players`` (seat order as given) and an
        invitation for each account that does not accept automatically; the
        invitations made (none: the game is complete, to be created now)."""
        waiting = [a for a in players if not accepts_automatically(a)]
        self._check_cap(conn, inviter, len(waiting))
        conn.execute(
            "INSERT INTO pending_games (game_id, game, players, options, rated, clock, created_by,"
            " invited_by, status, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 'invited', now() + make_interval(secs => %s))",
            (
                game_id,
                game,
                [a.handle for a in players],
                Jsonb(options),
                rated,
                Jsonb(clock) if clock is not None else None,
                created_by,
                inviter,
                self.ttl_s,
            ),
        )
        return self._insert(conn, GAME, game_id, waiting, inviter)

    def invite_to_tournament(
        self, conn: psycopg.Connection, tournament_id: str, accounts: Sequence[Account], inviter: str
    ) -> list[dict[str, Any]]:
        """One invitation per account (an account already invited and not yet
        answering is not invited twice); the invitations made."""
        tid = uuid.UUID(tournament_id)
        already = {
            r[0]
            for r in conn.execute(
                "SELECT account_id::text FROM invitations WHERE target_id = %s AND status = 'pending'"
                " AND expires_at > now()",
                (tid,),
            ).fetchall()
        }
        waiting = [a for a in accounts if a.account_id not in already]
        self._check_cap(conn, inviter, len(waiting))
        return self._insert(conn, TOURNAMENT, tid, waiting, inviter)

    # -- answering ----------------------------------------------------------
    def locked(self, conn: psycopg.Connection, invitation_id: str, account: Account) -> dict[str, Any]:
        """One of ``account``'s own pending invitations (``kind``, ``target``), locked
        until ``conn``'s transaction ends, and so is its game: every answer to one
        game's invitations in turn, so its last accept starts it once."""
        try:
            iid = uuid.UUID(invitation_id)
        except ValueError:
            raise invitation_not_found() from None
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                "SELECT kind, target_id::text AS target, status, expires_at <= now() AS expired"
                " FROM invitations WHERE invitation_id = %s AND account_id = %s FOR UPDATE",
                (iid, uuid.UUID(account.account_id)),
            ).fetchone()
        if row is None:
            raise invitation_not_found()
        if row["status"] != "pending":
            raise Conflicting(
                "invitation_answered", f"This invitation is {row['status']} already.", {"status": row["status"]}
            )
        if row["expired"]:
            raise Conflicting("invitation_expired", "This invitation has expired.")
        if row["kind"] == GAME:
            conn.execute("SELECT 1 FROM pending_games WHERE game_id = %s FOR UPDATE", (row["target"],))
        return row

    def answer(self, conn: psycopg.Connection, invitation_id: str, taken: dict[str, Any], accept: bool) -> bool:
        """Record the answer to an invitation :meth:`locked` took in ``conn``; a
        decline ends its game.  True: the accept that completes its game (every
        invitation of it accepted), which the caller creates now."""
        status = "accepted" if accept else "declined"
        conn.execute(
            "UPDATE invitations SET status = %s, answered_at = now() WHERE invitation_id = %s",
            (status, uuid.UUID(invitation_id)),
        )
        if taken["kind"] != GAME:
            return False
        if not accept:
            conn.execute(
                "UPDATE invitations SET status = 'cancelled' WHERE target_id = %s AND status = 'pending'",
                (taken["target"],),
            )
            conn.execute("UPDATE pending_games SET status = 'declined' WHERE game_id = %s", (taken["target"],))
            return False
        (left,) = one(
            conn.execute(
                "SELECT count(*) FROM invitations WHERE target_id = %s AND status <> 'accepted'", (taken["target"],)
            )
        )
        return left == 0

    @staticmethod
    def pending(conn: psycopg.Connection, game_id: Any) -> dict[str, Any]:
        """A pending game's row (its terms), in ``conn``'s transaction: its invitations hold
        it (``locked`` took its lock), so it is there."""
        with conn.cursor(row_factory=dict_row) as cur:
            return one(cur.execute("SELECT * FROM pending_games WHERE game_id = %s", (game_id,)))

    @staticmethod
    def started(conn: psycopg.Connection, game_id: Any) -> None:
        """Mark a pending game started, in the transaction that created its game."""
        conn.execute("UPDATE pending_games SET status = 'started' WHERE game_id = %s", (game_id,))

    # -- reading ------------------------------------------------------------
    def pending_for(self, account: Account, limit: int = 100) -> list[dict[str, Any]]:
        """The account's pending, unexpired invitations, oldest first."""
        rows = self._fetch(
            "SELECT i.invitation_id::text, i.kind, i.target_id::text, i.invited_by, i.created_at, i.expires_at,"
            " p.game, p.players, p.rated"
            " FROM invitations i LEFT JOIN pending_games p ON i.kind = 'game' AND p.game_id = i.target_id"
            " WHERE i.account_id = %s AND i.status = 'pending' AND i.expires_at > now()"
            " ORDER BY i.created_at, i.invitation_id LIMIT %s",
            (uuid.UUID(account.account_id), limit),
        )
        out = []
        for iid, kind, target, inviter, created, expires, game, players, rated in rows:
            item: dict[str, Any] = {
                "id": iid,
                "kind": kind,
                "invited_by": inviter,
                "created_at": _iso(created),
                "expires_at": _iso(expires),
            }
            if kind == GAME:
                item |= {"game_id": target, "game": game, "players": list(players), "rated": rated}
            else:
                item["tournament_id"] = target
            out.append(item)
        return out

    def pending_game(self, game_id: str) -> dict[str, Any] | None:
        """A game that waits for its invitations, as ``GET /v1/games/{id}`` shows it
        (``None``: no such pending game; a started one is read as a game)."""
        try:
            gid = uuid.UUID(game_id)
        except ValueError:
            return None
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            pending = cur.execute(
                "SELECT *, expires_at <= now() AS expired FROM pending_games WHERE game_id = %s", (gid,)
            ).fetchone()
            if pending is None:
                return None
            invites = cur.execute(
                "SELECT invitation_id::text AS id, handle AS player, status FROM invitations"
                " WHERE target_id = %s ORDER BY handle",
                (gid,),
            ).fetchall()
        status = pending["status"]
        if status == INVITED and pending["expired"]:
            status = EXPIRED
        return {
            "id": game_id,
            "game": pending["game"],
            "version": 0,
            "status": status,
            "players": list(pending["players"]),
            "to_act": [],
            "view": {},
            "result": None,
            "seat": None,
            "created_at": _iso(pending["created_at"]),
            "rated": bool(pending["rated"]),
            "unrated_reason": None,
            "created_by": pending["created_by"],
            "clock": None,
            "invitations": invites,
            "expires_at": _iso(pending["expires_at"]),
        }
