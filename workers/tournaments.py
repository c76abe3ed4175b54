"""The tournaments' RQ jobs: project one tournament's read model, advance its
rounds (``service.service_layer.tournament_rounds``).  They take ids only and are
idempotent: a duplicated, late or concurrent job does no harm.

Three things advance a tournament (docs/TOURNAMENTS.md "The worker"): a new
round's pairing (``service.nudge.ProjectionQueue.tournament``, also right after the
start), a tournament game's end seen by the projection drain
(:func:`games_finished`), and the periodic sweep (:func:`sweep`), the safety
net for a lost job or a worker that was down.
"""

from __future__ import annotations

import logging
import threading

from projections import tournaments as tprojection
from service import redis_roles
from service.adapters.eventstore import StoreUnavailable
from service.bootstrap import game_service, round_runner, tournament_service
from service.service_layer.tournament_rounds import RoundRunner
from workers import context, timeouts

log = logging.getLogger(__name__)

_lock = threading.Lock()
_runner: tuple[context.Context, RoundRunner] | None = None


def runner(ctx: context.Context) -> RoundRunner:
    """The worker's round runner over ``ctx`` (built once per context)."""
    global _runner
    with _lock:
        if _runner is None or _runner[0] is not ctx:
            service = tournament_service(ctx)
            # The API's terms for a new game: a tournament without a clock gets the
            # configured default, and every game the configured length cap.
            games = game_service(ctx, cache_size=timeouts.CACHE_SIZE)
            _runner = (ctx, round_runner(ctx, service, games))
        return _runner[1]


def advance(tournament_id: str) -> int:
    """Start the current round's tables and record its finished games."""
    return runner(context.get()).advance(tournament_id)


def project(tournament_id: str) -> int:
    """Bring one tournament's read model up to its stream."""
    ctx = context.get()
    return tprojection.catch_up(ctx.redis, ctx.tournament_store, tournament_id)


def games_finished(ctx: context.Context, game_ids: list[str]) -> None:
    """The drain saw these games finished: advance the tournaments they belong to."""
    for tid in sorted(set(ctx.tournament_store.tournaments_of(game_ids).values())):
        ctx.nudge.advance(tid)


def sweep(ctx: context.Context) -> int:
    """Advance every running tournament (the safety net); returns the commands recorded."""
    recorded = 0
    rounds = runner(ctx)
    for tid in ctx.tournament_store.unfinished():
        try:
            recorded += rounds.advance(tid)
        except (StoreUnavailable, *redis_roles.UNAVAILABLE):
            raise  # a server away: the next sweep tries again
        except Exception:
            # One tournament that cannot advance must not hold up the others; the log says why.
            log.exception("tournament %s could not be advanced", tid)
    return recorded
