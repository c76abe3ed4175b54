"""House bots' accounts (docs/BOTS.md "House bots"; migration 0010).

A house bot is an account of kind ``bot``: for each game and level, as many as
the game has seats at most (so a table can be filled with bots of one level),
numbered from 1 and named ``<game>-bot-<level>`` (instance 1) or
``<game>-bot-<level>-<n>`` (``service.domain.identity.bot_handle``): a seat is
held by one account, so two bots of a level at a table are two accounts.  The operator
provisions them (``make bots``, which ``make run`` calls at start): each is
created if missing and (re)keyed with the key derived from the operator's bot
secret (``identity.bot_key``), so the worker that acts for a bot derives the
same key and nothing keeps it in clear.  Provisioning is idempotent.

Everything else about a bot is what any account has: it sits at tables, is
seated by handle, is rated, and acts with its key through the command path.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg

from service.adapters.pooled import Pooled, StoreUnavailable
from service.domain import identity
from service.domain.errors import Conflicting
from service.domain.identity import Account


@dataclass(frozen=True, slots=True)
class HouseBot:
    account_id: str
    handle: str
    game: str
    level: int
    #: Its number among the bots of its game and level (1: the one ``GET /v1/bots`` lists).
    instance: int = 1

    @property
    def account(self) -> Account:
        return Account(self.account_id, self.handle, identity.BOT)


def levels() -> list[int]:
    """The levels the bot package plays (``service.bots.LEVELS``)."""
    from service.bots import LEVELS

    numbers = LEVELS.keys() if isinstance(LEVELS, dict) else range(len(LEVELS))
    return sorted(n for n in numbers if n >= 1 and level(n) is not None)


def level(n: int) -> Any:
    """Level ``n`` of the bot package (its ``budget_s``, ``algorithm``, ``description``), or ``None``."""
    from service.bots import LEVELS

    try:
        return LEVELS[n]
    except (KeyError, IndexError, TypeError):
        return None


_SELECT = (
    "SELECT a.account_id::text, a.handle, b.game, b.level, b.instance"
    " FROM house_bots b JOIN accounts a USING (account_id) WHERE a.kind = 'bot'"
)


class HouseBots(Pooled):
    def provision(
        self, games: Iterable[str], levels: Iterable[int], secret: str, seats: Mapping[str, int] | None = None
    ) -> list[HouseBot]:
        """Create (or re-key) the house bots of every game and level, ``seats[game]`` of
        each (the game's most seats; 1 for a game not in ``seats``); the bots, in order.

        A handle of the bots' form is reserved (``identity.reserved_handle``), so
        only an account that predates this migration can hold one: that is a
        clear refusal naming it, never a silent take-over."""
        levels = sorted(set(levels))
        bots = []
        try:
            with self._conn() as conn, conn.transaction():
                for game in games:
                    for level in levels:
                        for instance in range(1, max(1, (seats or {}).get(game, 1)) + 1):
                            bots.append(self._provision_one(conn, game, level, instance, secret))
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
        return bots

    @staticmethod
    def _provision_one(conn: psycopg.Connection, game: str, level: int, instance: int, secret: str) -> HouseBot:
        handle = identity.bot_handle(game, level, instance)
        key_hash = identity.hash_key(identity.bot_key(secret, handle))
        row = conn.execute(
            "SELECT account_id, kind FROM accounts WHERE handle_key = %s FOR UPDATE", (identity.handle_key(handle),)
        ).fetchone()
        if row is None:
            account_id = uuid.uuid4()
            conn.execute(
                "INSERT INTO accounts (account_id, handle, kind, key_hash) VALUES (%s, %s, 'bot', %s)",
                (account_id, handle, key_hash),
            )
        elif row[1] != identity.BOT:
            raise Conflicting("handle_taken", f"The handle {handle!r} is taken (handles are unique ignoring case).")
        else:
            account_id = row[0]
            conn.execute(
                "UPDATE accounts SET key_hash = %s WHERE account_id = %s AND key_hash <> %s",
                (key_hash, account_id, key_hash),
            )
        conn.execute(
            "INSERT INTO house_bots (account_id, game, level, instance) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (account_id) DO NOTHING",
            (account_id, game, level, instance),
        )
        return HouseBot(str(account_id), handle, game, level, instance)

    def all(self) -> list[HouseBot]:
        """Every house bot, by game, level and instance."""
        rows = self._fetch(_SELECT + " ORDER BY b.game, b.level, b.instance", ())
        return [HouseBot(*row) for row in rows]

    def listed(self) -> list[HouseBot]:
        """The first bot of every game and level (what ``GET /v1/bots`` lists)."""
        rows = self._fetch(_SELECT + " AND b.instance = 1 ORDER BY b.game, b.level", ())
        return [HouseBot(*row) for row in rows]

    def of(self, game: str, level: int) -> HouseBot | None:
        """The first house bot of ``game`` and ``level``, if provisioned."""
        rows = self._fetch(_SELECT + " AND b.game = %s AND b.level = %s ORDER BY b.instance LIMIT 1", (game, level))
        return HouseBot(*rows[0]) if rows else None

    def every(self, game: str, level: int) -> list[HouseBot]:
        """The house bots of ``game`` and ``level``, by instance."""
        rows = self._fetch(_SELECT + " AND b.game = %s AND b.level = %s ORDER BY b.instance", (game, level))
        return [HouseBot(*row) for row in rows]

    def by_handle(self, handle: str) -> HouseBot | None:
        rows = self._fetch(_SELECT + " AND a.handle_key = %s", (identity.handle_key(handle),))
        return HouseBot(*rows[0]) if rows else None
