"""Who is calling, and what they may do (docs/API.md "Accounts and keys").

Pure: no I/O.  The HTTP layer (``service.http.common``) turns a bearer
credential into a :class:`Principal` (looking account keys up through
``service.adapters.accounts``) and asks the functions here what that principal
is to one game.

* Handles and casual names: :func:`valid_handle`, :func:`valid_name`,
  :func:`same_name`.  Patterns are matched whole (``fullmatch``): a ``$``
  would let a trailing newline through.
* Account keys: 256 random bits shown once (:func:`new_key`), kept only as
  sha256 (:func:`hash_key`).  A key is random, so its hash is as good as a
  slow KDF and a lookup by hash reveals nothing about any other key.
* Rights: the operator (``ADMIN_TOKEN``) has every right; an organiser key has
  the organiser's rights only over the games it created
  (:func:`organises`); the key of an account in a seat acts for that
  seat (:func:`account_seat`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Account handles: 3-24 characters of ``A-Z a-z 0-9 _ -``; unique ignoring case.
HANDLE = re.compile(r"[A-Za-z0-9_-]{3,24}")
HANDLE_RULE = "3-24 characters of A-Z a-z 0-9 _ -"
#: Names of casual games' seats: a handle, or what the contract always
#: allowed (1-32 characters of ``A-Z a-z 0-9 _ . -``, starting with a letter
#: or digit); matched whole and compared ignoring case like handles.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,31}|[A-Za-z0-9_-]{3,24}")
NAME_RULE = "a handle, or 1-32 characters of A-Z a-z 0-9 _ . - starting with a letter or digit"

#: Every account key starts with this, so a leaked key is easy to recognise
#: (log redaction, secret scanners) and a seat token is never looked up as one.
KEY_PREFIX = "qdk_"

PLAYER = "player"
ORGANISER = "organiser"
#: A house bot (docs/BOTS.md "House bots"): provisioned by the operator, never registered.
BOT = "bot"
KINDS = (PLAYER, ORGANISER, BOT)
#: Kinds that sit in games' seats.
SEATED_KINDS = (PLAYER, BOT)
#: House bots' handles: ``<game>-bot-<level>`` and ``<game>-bot-<level>-<n>``; nobody else may take one.
BOT_HANDLE = re.compile(r"[A-Za-z0-9_-]*-bot-[0-9]+(?:-[0-9]+)?")
#: Games whose name is too long for a handle with ``-bot-<level>`` get a short one.
_BOT_PREFIX = {"nautilus-industries": "nautilus-ind"}


def valid_handle(handle: Any) -> bool:
    return isinstance(handle, str) and HANDLE.fullmatch(handle) is not None


def valid_name(name: Any) -> bool:
    return isinstance(name, str) and NAME.fullmatch(name) is not None


def handle_key(handle: str) -> str:
    """The form under which handles (and names at one table) are unique.
    Handles are ASCII, so ``lower`` is exact (PostgreSQL uses the same)."""
    return handle.lower()


def same_name(names: Sequence[str]) -> list[str]:
    """The names of ``names`` that repeat another, ignoring case."""
    seen: dict[str, str] = {}
    repeated = []
    for name in names:
        key = handle_key(name)
        if key in seen:
            repeated.append(name)
        seen.setdefault(key, name)
    return repeated


def bot_handle(game: str, level: int, instance: int = 1) -> str:
    """The handle of ``game``'s house bot of ``level``, e.g. ``nauticus-bot-2``
    (``nautilus-ind-bot-2``: a handle has at most 24 characters); its ``instance``
    n > 1 (another bot of the level, for another seat of one table) is
    ``nauticus-bot-2-<n>``."""
    base = f"{_BOT_PREFIX.get(game, game)}-bot-{level}"
    return base if instance == 1 else f"{base}-{instance}"


def reserved_handle(handle: str) -> bool:
    """A handle of the house bots' form, which only the operator provisions."""
    return BOT_HANDLE.fullmatch(handle) is not None


def bot_key(secret: str, handle: str) -> str:
    """A house bot's key, derived from the operator's bot secret: the worker that
    acts for the bot derives it again and nothing keeps it in clear.  A new secret
    re-keys every bot at the next provisioning (``make bots``)."""
    mac = hmac.new(secret.encode("utf-8"), b"quarterdeck house bot\0" + handle_key(handle).encode(), "sha256")
    return KEY_PREFIX + base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def new_key() -> str:
    """A fresh account key: the prefix and 256 random bits, URL-safe."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def looks_like_key(credential: str | None) -> bool:
    return credential is not None and credential.startswith(KEY_PREFIX)


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def same_hash(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


@dataclass(frozen=True, slots=True)
class Account:
    account_id: str
    handle: str
    kind: str

    @property
    def is_organiser(self) -> bool:
        return self.kind == ORGANISER


#: What a bearer credential is, before any game is considered.
OPERATOR = "operator"
ACCOUNT = "account"
TOKEN = "token"  # not the operator's, not an account key: maybe a seat token of some game
NOBODY = "nobody"


@dataclass(frozen=True, slots=True)
class Principal:
    kind: str
    account: Account | None = None
    #: The credential as sent, for a ``TOKEN`` (checked against one game's seats).
    token: str | None = None

    @property
    def handle(self) -> str | None:
        return self.account.handle if self.account else None

    @property
    def is_operator(self) -> bool:
        return self.kind == OPERATOR

    @property
    def is_organiser(self) -> bool:
        return self.account is not None and self.account.is_organiser

    @property
    def is_player(self) -> bool:
        return self.account is not None and self.account.kind == PLAYER


@dataclass(frozen=True, slots=True)
class GameAccess:
    """What decides rights over one game, as its ``GameCreated`` event says.

    Games created before accounts existed have neither ``accounts`` nor
    ``created_by``: every seat is a name, and only the operator organises them."""

    players: tuple[str, ...]
    #: Per seat: the seat is an account (its key acts for it).
    accounts: tuple[bool, ...]
    created_by: str | None = None
    rated: bool = False

    @classmethod
    def from_created(cls, created: dict[str, Any]) -> GameAccess:
        players = tuple(created.get("players") or ())
        flags = created.get("accounts")
        accounts = tuple(bool(x) for x in flags) if isinstance(flags, list) else (False,) * len(players)
        return cls(players, accounts, created.get("created_by"), bool(created.get("rated", False)))


def organises(principal: Principal, access: GameAccess) -> bool:
    """Organiser rights over this game: the operator always; an organiser key
    only over a game it created."""
    if principal.is_operator:
        return True
    return (
        principal.is_organiser
        and access.created_by is not None
        and handle_key(access.created_by) == handle_key(principal.handle or "")
    )


def account_seat(principal: Principal, access: GameAccess) -> int | None:
    """The seat of this game that the principal's account sits in, if any."""
    if principal.account is None:
        return None
    mine = handle_key(principal.account.handle)
    for seat, (player, is_account) in enumerate(zip(access.players, access.accounts, strict=False)):
        if is_account and handle_key(player) == mine:
            return seat
    return None


def may_abort(principal: Principal, access: GameAccess) -> bool:
    """Who may abort a game: the operator, and the organiser who created it."""
    return organises(principal, access)
