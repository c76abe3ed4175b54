"""What organisers, players and the worker ask of a tournament: frozen data,
named in the imperative (TRN-001).  ``rules.decide`` turns each into events or
refuses it; nothing here checks anything.

``by`` is the handle of the account asking, or ``None`` for the operator
(``ADMIN_TOKEN``), who has every organiser's rights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.tournaments.events import SWISS


@dataclass(frozen=True, slots=True)
class CreateTournament:
    """``table_sizes``: the sizes a table may have when the field does not divide
    (``None``: every size the game allows up to ``table_size``).  ``rounds``:
    ``None`` only for a round robin, which then lasts until everyone has met
    everyone.  ``points``: ``None`` for the default scheme (TRN-030)."""

    name: str
    game: str
    table_size: int
    by: str | None = None
    format: str = SWISS
    rounds: int | None = None
    table_sizes: tuple[int, ...] | None = None
    clock: dict[str, Any] | None = None
    rated: bool = True
    points: dict[str, list[int]] | None = None
    late_until_round: int | None = None
    #: TRN-080: ``{"level": n, "rated": bool}``: byes played against that house bot.
    bye_bot: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RegisterPlayers:
    """Register ``handles`` (all or none).  An organiser registers anyone; a player
    registers itself (the HTTP layer sends its own handle)."""

    handles: tuple[str, ...]
    by: str | None = None


@dataclass(frozen=True, slots=True)
class StartTournament:
    """Close registration, fix the rounds, draw the lot and pair round 1."""

    by: str | None = None


@dataclass(frozen=True, slots=True)
class StartTable:
    """The worker created the game of ``(round, table)``: record it."""

    round: int
    table: int
    game_id: str


@dataclass(frozen=True, slots=True)
class FinishTable:
    """The game of ``(round, table)`` ended with ``result`` (its ``GameFinished``
    result; the tournament keeps ``events.table_result`` of it)."""

    round: int
    table: int
    game_id: str
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class WithdrawPlayer:
    """``player`` leaves from the next round's pairing (TRN-060).  A player withdraws
    itself (``by == player``); the organiser or the operator withdraws anyone, with a
    ``reason``."""

    player: str
    by: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class AbortTournament:
    """Stop the tournament for good (TRN-070): the organiser or the operator, with a reason."""

    reason: str
    by: str | None = None


Command = (
    CreateTournament | RegisterPlayers | StartTournament | StartTable | FinishTable | WithdrawPlayer | AbortTournament
)
