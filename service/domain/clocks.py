"""Game clocks, computed from the stream alone (pure: no I/O, no clock of its own).

A game's time control is one of its terms, written in ``GameCreated`` (``"clock"``):

* ``{"type": "none"}`` — no clock;
* ``{"type": "fischer", "base_s": 600, "increment_s": 10}`` — each seat has a time bank that
  runs while the seat is in ``to_act``; ``increment_s`` is added after each of its intents;
* ``{"type": "deadline", "per_decision_s": 86400}`` — each time a seat comes to act (or acts
  and stays to act), it has that long.

Time comes only from the stream: every event's meta records ``received_at``, the command
side's time when the intent arrived (or the deadline itself, for a timeout).  After each
decision the pipeline (``service/domain/pipeline.py``) writes the clock as it stands at that
``received_at`` into the meta of the decision's events (``meta.clock``)::

    {"at": "<time>",                    # the batch's time (never earlier than the one before)
     "remaining_us": {"0": 597200000, ...},   # every seat's time left at "at"
     "deadline": {"1": "<time>"},       # seats in to_act: when their time runs out
     "timed_out": [0]}                  # seats forfeited by their clock, in order

so the view at version N is the clock at version N, the same today and in a year, and the
audit's re-decide recomputes it byte for byte.  Times are the ISO strings of
``service.service_layer.commands.now_iso`` (UTC, microseconds, ``Z``); arithmetic is in whole
microseconds, so nothing is rounded and no float enters the stream.

A seat whose deadline has passed may no longer act (``expired``; ``422 clock_expired``), and
a timeout is due once ``now`` reaches the deadline (``due``): an intent exactly at its
deadline is still in time, and then the timeout no longer is (the seat moved), so at the
deadline exactly one of the two can be recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any, TypeGuard

NONE, FISCHER, DEADLINE = "none", "fischer", "deadline"
TYPES = (NONE, FISCHER, DEADLINE)
#: Bounds of a time control, in seconds (one year: a longer game is a game with no clock).
MAX_SECONDS = 366 * 24 * 3600

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


class InvalidClock(ValueError):
    """A time control that is not one of the three shapes above."""


# -- times -------------------------------------------------------------------------------------


# Both conversions are cached: a decision reads back the times the one before it wrote (its
# time, the deadlines it carries), so most conversions repeat (``make bench``: intents).
@lru_cache(maxsize=8192)
def to_us(iso: str) -> int:
    """An ISO time (``...Z``) as whole microseconds since the epoch."""
    return (datetime.fromisoformat(iso.replace("Z", "+00:00")) - _EPOCH) // _US


@lru_cache(maxsize=8192)
def to_iso(us: int) -> str:
    """The inverse of :func:`to_us`, in the stream's format.  (``time.strftime`` of a
    ``gmtime``: several times cheaper than a ``datetime``, and every decision formats a few.)"""
    seconds, micro = divmod(us, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{micro:06d}Z"


# -- the time control --------------------------------------------------------------------------


def _seconds(raw: dict[str, Any], name: str, minimum: int) -> int:
    value = raw.get(name)
    if type(value) is not int or not minimum <= value <= MAX_SECONDS:
        raise InvalidClock(f"'{name}' must be a whole number of seconds from {minimum} to {MAX_SECONDS}.")
    return value


def validate(raw: Any) -> dict[str, Any]:
    """The canonical form of a time control, or :class:`InvalidClock` saying what is wrong."""
    if not isinstance(raw, dict) or raw.get("type") not in TYPES:
        raise InvalidClock(f"'clock' must be null or an object whose 'type' is one of {', '.join(TYPES)}.")
    kind = raw["type"]
    fields = {NONE: set(), FISCHER: {"base_s", "increment_s"}, DEADLINE: {"per_decision_s"}}[kind]
    unknown = set(raw) - fields - {"type"}
    if unknown:
        raise InvalidClock(f"a {kind} clock takes no {', '.join(sorted(unknown))}.")
    if kind == FISCHER:
        return {"type": FISCHER, "base_s": _seconds(raw, "base_s", 1), "increment_s": _seconds(raw, "increment_s", 0)}
    if kind == DEADLINE:
        return {"type": DEADLINE, "per_decision_s": _seconds(raw, "per_decision_s", 1)}
    return {"type": NONE}


def resolve(raw: Any, default_deadline_s: int | None) -> dict[str, Any]:
    """The time control a game is created with: ``raw`` as given, or when it is absent or
    ``None`` the configured default (a per-decision deadline, or none)."""
    if raw is None:
        if default_deadline_s:
            return {"type": DEADLINE, "per_decision_s": default_deadline_s}
        return {"type": NONE}
    return validate(raw)


def runs(spec: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a game with this time control (``None``: created before clocks) has a clock."""
    return isinstance(spec, dict) and spec.get("type") in (FISCHER, DEADLINE)


@dataclass(frozen=True, slots=True)
class Clock:
    """What the pipeline needs to move a game's clock: its time control, the number of seats
    and the clock recorded with the last event (``None`` before the first)."""

    spec: dict[str, Any]
    players: int
    state: dict[str, Any] | None


# -- the clock ---------------------------------------------------------------------------------


def _allowance_us(spec: dict[str, Any]) -> int:
    """What a seat has when it comes to act afresh: its bank (Fischer) or one decision's time."""
    seconds = spec["base_s"] if spec["type"] == FISCHER else spec["per_decision_s"]
    return seconds * 1_000_000


def start(spec: dict[str, Any], players: int, at: str, to_act: list[int]) -> dict[str, Any]:
    """The clock when the game opens at ``at``: every seat has its full allowance, and the
    clocks of the seats to act start."""
    full = _allowance_us(spec)
    t = to_us(at)
    return {
        "at": to_iso(t),
        "remaining_us": {str(s): full for s in range(players)},
        "deadline": {str(s): to_iso(t + full) for s in sorted(to_act)},
        "timed_out": [],
    }


def advance(
    spec: dict[str, Any],
    before: dict[str, Any],
    *,
    at: str,
    mover: int | None,
    to_act: list[int],
    timed_out: int | None = None,
) -> dict[str, Any]:
    """The clock after a decision recorded at ``at``: the seats whose clocks ran until then are
    charged the time; ``mover`` (the seat whose intent it was, ``None`` for the platform's own
    decisions: a timeout, a resignation, an abort) gains the increment; the seats of ``to_act``
    (after the decision) run from now on.  A seat that stays to act without having acted keeps
    its deadline; a seat that acted, or comes to act, starts afresh (its bank, or a new decision's
    time).  ``timed_out``: the seat this decision forfeits for lack of time (its time is 0)."""
    # Times in the stream are the command side's; two API hosts' clocks may disagree by a hair,
    # so a batch never counts as earlier than the one before (no time is ever charged twice or
    # negatively).
    t = max(to_us(at), to_us(before["at"]))
    remaining = dict(before["remaining_us"])
    running = {int(s): to_us(d) for s, d in before["deadline"].items()}
    for seat, deadline in running.items():
        remaining[str(seat)] = max(0, deadline - t)
    fischer = spec["type"] == FISCHER
    if mover is not None and fischer:
        remaining[str(mover)] += spec["increment_s"] * 1_000_000
    out = list(before.get("timed_out", []))
    if timed_out is not None:
        remaining[str(timed_out)] = 0
        out.append(timed_out)
    deadlines: dict[str, str] = {}
    for seat in sorted(to_act):
        if seat in running and seat != mover:
            deadline = running[seat]  # still the same decision: the same deadline
        else:
            deadline = t + (remaining[str(seat)] if fischer else _allowance_us(spec))
        deadlines[str(seat)] = to_iso(deadline)
        remaining[str(seat)] = max(0, deadline - t)
    if not fischer:
        # A per-decision clock has nothing to carry: a seat not to act has a whole decision.
        for seat in remaining:
            if seat not in deadlines and int(seat) not in out:
                remaining[seat] = _allowance_us(spec)
    return {"at": to_iso(t), "remaining_us": remaining, "deadline": deadlines, "timed_out": out}


def deadline_of(clock: dict[str, Any] | None, seat: int) -> str | None:
    """When ``seat``'s time runs out, if its clock runs."""
    if clock is None:
        return None
    return clock["deadline"].get(str(seat))


def expired(clock: dict[str, Any] | None, seat: int, at: str) -> bool:
    """Whether an intent of ``seat`` arriving at ``at`` comes after its deadline."""
    deadline = deadline_of(clock, seat)
    return deadline is not None and to_us(at) > to_us(deadline)


def due(clock: dict[str, Any] | None, now: str) -> list[tuple[str, int]]:
    """``(deadline, seat)`` of every seat whose time has run out by ``now``, earliest first
    (ties by seat)."""
    if clock is None:
        return []
    t = to_us(now)
    found = [(to_us(d), int(s)) for s, d in clock["deadline"].items() if to_us(d) <= t]
    return [(to_iso(us), seat) for us, seat in sorted(found)]


def earliest(clock: dict[str, Any] | None) -> str | None:
    """The first deadline of the clock, if any seat's clock runs."""
    if not clock or not clock["deadline"]:
        return None
    return to_iso(min(to_us(d) for d in clock["deadline"].values()))


def public(spec: Any, clock: dict[str, Any] | None) -> dict[str, Any] | None:
    """The clock as ``GET /v1/games/{id}`` shows it (``None``: the game has no clock):
    the time control, each seat's time left as of the version shown (``as_of``), and the
    absolute deadline of each seat to act."""
    if not runs(spec) or clock is None:
        return None
    return {
        **spec,
        "as_of": clock["at"],
        "remaining_s": {s: us / 1_000_000 for s, us in sorted(clock["remaining_us"].items(), key=lambda x: int(x[0]))},
        "deadline": dict(clock["deadline"]),
        "timed_out": list(clock.get("timed_out", [])),
    }
