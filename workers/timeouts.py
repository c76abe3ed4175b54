"""The clocks' scheduler: timeouts are written with no client calling.

Every ``QD_TIMEOUT_TICK_SECONDS`` (0.25 s) the worker takes the games whose earliest deadline
has passed from the clocks' index (``projections/deadlines.py``, a Redis sorted set the board
projection keeps) and asks the command side to time them out (``GameService.time_out``):
that reads the stream, and for each seat whose deadline has passed appends ``SeatTimedOut``
through the decide pipeline at the stream's head, recorded at the deadline.  If the seat moved
in time, the append loses the optimistic-concurrency race, or there is nothing due: nothing
is written.  A worker that was down when a deadline passed finds the entry still due when it
comes back, and the timeout is still recorded at the deadline, not at the moment it is written.

Why the worker's own loop rather than RQ's scheduler (``enqueue_at``): a game has one entry
that each projection overwrites, where a scheduled job per decision would pile up one stale
job per intent (each to be cancelled or to find nothing to do), and RQ's scheduler polls once
a second, where a timeout is wanted within a fraction of one.  The index is derived data: it
moves in the same MULTI as the board it comes from, and ``make rebuild`` writes it again.
Several workers may run the loop: :func:`projections.deadlines.claim` hands each due game to
one of them for a lease, and the append's expected version makes a second writer harmless.
"""

from __future__ import annotations

import logging
import threading
import time

from projections import deadlines
from service import redis_roles
from service.adapters.eventstore import StoreUnavailable
from service.bootstrap import game_service
from service.domain.errors import NotFound
from service.service_layer.commands import GameService
from workers import context

log = logging.getLogger(__name__)

#: Seconds a claimed game is left to the worker that claimed it.
LEASE_SECONDS = 5.0
#: Games looked at in one tick, at most (the rest wait for the next tick).
PER_TICK = 200
#: States kept by the worker's command side (only games whose clocks ran out).
CACHE_SIZE = 256


def service(ctx: context.Context) -> GameService:
    """The command side the scheduler writes through (the same as the API's)."""
    return game_service(ctx, cache_size=CACHE_SIZE)


def tick(ctx: context.Context, games: GameService, now: float | None = None) -> int:
    """One look: time out every game whose earliest deadline is at or before ``now`` (epoch
    seconds; default the worker's clock).  Returns the timeouts written."""
    now = time.time() if now is None else now
    written = 0
    for gid in deadlines.claim(ctx.redis, now, LEASE_SECONDS, PER_TICK):
        try:
            written += games.time_out(gid)
        except NotFound:
            deadlines.forget(ctx.redis, gid)  # an index entry of a game the store does not have
        except (StoreUnavailable, *redis_roles.UNAVAILABLE):
            raise  # a server away: the lease brings the game back once it returns
        except Exception:
            # One game that cannot be timed out (a bug) must not stop the others; the lease
            # brings it back, and the log says why.
            log.exception("timeouts: game %s could not be timed out", gid)
    return written


def run_forever(interval: float, stop: threading.Event) -> None:
    """The worker's timeout thread (``python -m workers``)."""
    ctx = context.get()
    games = service(ctx)
    while not stop.is_set():
        try:
            written = tick(ctx, games)
            if written:
                log.info("timeouts: %d seat(s) timed out", written)
        except Exception as exc:  # PostgreSQL or Redis away: try again next tick
            log.warning("timeouts failed (%s); retrying", type(exc).__name__)
            stop.wait(1.0)
        stop.wait(interval)
