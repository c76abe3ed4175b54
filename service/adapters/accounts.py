"""Accounts in PostgreSQL: register, look a key up, rotate it.

Keys are never stored, logged or cached: only their sha256
(``service.domain.identity.hash_key``).  Each request looks its key up again,
so a rotation stops the old key at once in every process.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import psycopg

from service.adapters.pooled import Pooled, StoreUnavailable
from service.domain import identity
from service.domain.errors import Conflicting, NotFound, Refused
from service.domain.identity import Account


def handle_taken(handle: str) -> Conflicting:
    return Conflicting("handle_taken", f"The handle {handle!r} is taken (handles are unique ignoring case).")


def invalid_handle(handle: object) -> Refused:
    return Refused(
        "invalid_handle",
        f"A handle is {identity.HANDLE_RULE}.",
        {"handle": handle if isinstance(handle, str) and len(handle) <= 64 else None},
    )


class AccountStore(Pooled):
    def register(self, handle: str, kind: str) -> tuple[Account, str]:
        """A new account and its key (the only time the key exists in clear)."""
        if not identity.valid_handle(handle):
            raise invalid_handle(handle)
        if kind not in identity.KINDS or kind == identity.BOT:
            raise ValueError(kind)  # house bots are provisioned (service/adapters/house_bots.py)
        if identity.reserved_handle(handle):
            raise Conflicting(
                "handle_reserved", "Handles of the form '<game>-bot-<level>' are the house bots' (docs/BOTS.md)."
            )
        key = identity.new_key()
        account_id = uuid.uuid4()
        try:
            with self._conn() as conn:
                conn.execute(
                    "INSERT INTO accounts (account_id, handle, kind, key_hash) VALUES (%s, %s, %s, %s)",
                    (account_id, handle, kind, identity.hash_key(key)),
                )
        except psycopg.errors.UniqueViolation:
            raise handle_taken(handle) from None
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
        return Account(str(account_id), handle, kind), key

    def by_key(self, key: str) -> Account | None:
        """The account whose key this is, or ``None``."""
        presented = identity.hash_key(key)
        try:
            with self._conn() as conn:
                row = conn.execute(
                    "SELECT account_id::text, handle, kind, key_hash FROM accounts WHERE key_hash = %s", (presented,)
                ).fetchone()
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
        if row is None or not identity.same_hash(bytes(row[3]), presented):
            return None
        return Account(row[0], row[1], row[2])

    def rotate(self, account: Account, old_key: str) -> str:
        """Replace the account's key; the old one stops at once.  Guarded by
        the old key's hash, so of two rotations with one key only one wins."""
        new = identity.new_key()
        try:
            with self._conn() as conn:
                row = conn.execute(
                    "UPDATE accounts SET key_hash = %s, key_rotated_at = now()"
                    " WHERE account_id = %s AND key_hash = %s RETURNING account_id",
                    (identity.hash_key(new), uuid.UUID(account.account_id), identity.hash_key(old_key)),
                ).fetchone()
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
        if row is None:
            raise Conflicting("key_rotated", "This key was rotated meanwhile; use the new key.")
        return new

    def by_handles(self, handles: Sequence[str]) -> dict[str, Account]:
        """Accounts by handle (matched ignoring case), keyed by the handle as asked."""
        keys = [identity.handle_key(h) for h in handles]
        try:
            with self._conn() as conn:
                rows = conn.execute(
                    "SELECT account_id::text, handle, kind, handle_key FROM accounts WHERE handle_key = ANY(%s)",
                    (keys,),
                ).fetchall()
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc
        found = {r[3]: Account(r[0], r[1], r[2]) for r in rows}
        return {h: found[k] for h, k in zip(handles, keys, strict=True) if k in found}

    def players(self, handles: Sequence[str]) -> list[Account]:
        """The accounts of ``handles`` that sit in seats (players and house
        bots), in order; a refusal naming the handles that are neither."""
        found = self.by_handles(handles)
        missing = [h for h in handles if h not in found or found[h].kind not in identity.SEATED_KINDS]
        if missing:
            raise NotFound(
                "account_not_found",
                "Every seated handle must be a player's or a house bot's account.",
                {"handles": missing},
            )
        return [found[h] for h in handles]
