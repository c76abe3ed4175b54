"""Whether a rated game counts on the leaderboards (docs/LEADERBOARDS.md,
"What counts").

Pure: no I/O, no clock.  Every answer is a function of the game's own stream
(its ``GameCreated`` terms, its ``GameFinished`` result, which seats made a
decision) and, for repeated pairings, of the finish times of the games that
counted before it, so a live fold and a rebuild agree.

* A game asked to be rated counts only once **every seat has made its first
  decision** (an intent of the game; a resignation or a timeout is no
  decision): a game that ends before that finished unrated
  (:data:`NO_FIRST_DECISION`).  An aborted game never counts (:data:`ABORTED`).
* The same set of accounts counts at most :data:`PAIRING_LIMIT` times in any
  :data:`PAIRING_WINDOW_S` seconds per game type; later games of that set in the
  window are unrated (:data:`REPEATED_PAIRING`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

#: ``unrated_reason``: a seat left (resigned, timed out) before it made any decision.
NO_FIRST_DECISION = "no_first_decision"
#: ``unrated_reason``: the game was aborted (by its organiser, the operator or the length cap).
ABORTED = "aborted"
#: ``unrated_reason``: the same accounts already counted :data:`PAIRING_LIMIT` times in the window.
REPEATED_PAIRING = "repeated_pairing"
REASONS = (NO_FIRST_DECISION, ABORTED, REPEATED_PAIRING)

#: Games of one set of accounts that count per window, per game type.
PAIRING_LIMIT = 3
#: The pairing window, in seconds (a rolling 24 hours, by the games' finish times).
PAIRING_WINDOW_S = 24 * 3600

#: The platform's intents that are no decision of the seat (``service.domain.pipeline``).
NOT_DECISIONS = frozenset({"resign", "timeout", "abort"})


def asked_rated(created: dict[str, Any]) -> bool:
    """The game was created rated (its ``GameCreated`` says so)."""
    return created.get("rated") is True


def unrated_reason(created: dict[str, Any], result: Any, decided: Collection[int]) -> str | None:
    """Why a finished game asked to be rated does not count (``None``: it counts,
    pairing limits aside; also ``None`` for a casual game, which never asked).
    ``decided``: the seats that made at least one decision of their own."""
    if not asked_rated(created):
        return None
    if isinstance(result, dict) and result.get("reason") == "aborted":
        return ABORTED
    if any(seat not in decided for seat in range(len(created.get("players", [])))):
        return NO_FIRST_DECISION
    return None


def is_decision(meta: dict[str, Any] | None) -> int | None:
    """The seat whose own decision a recorded meta is, ``None`` for the platform's
    (the opening, a resignation, a timeout, an abort)."""
    if not meta or meta.get("auto") or not isinstance(meta.get("seat"), int):
        return None
    intent = meta.get("intent")
    if isinstance(intent, dict) and intent.get("type") in NOT_DECISIONS:
        return None
    return meta["seat"]


def pairing_of(players: Iterable[str]) -> str:
    """The key of a set of accounts: their handles, case-folded and sorted
    (a handle never holds a space)."""
    return " ".join(sorted(p.lower() for p in players))


def seconds(iso: str) -> float:
    """An ISO time as recorded (``...Z``) in seconds since the epoch."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def recent_counted(times: Sequence[str], at: str) -> list[str]:
    """Of the finish times of a pairing's counted games, those within the window before ``at``."""
    now = seconds(at)
    return [t for t in times if now - seconds(t) < PAIRING_WINDOW_S]


def pairing_allows(times: Sequence[str], at: str) -> bool:
    """Whether one more game of the pairing, finished at ``at``, may count."""
    return len(recent_counted(times, at)) < PAIRING_LIMIT
