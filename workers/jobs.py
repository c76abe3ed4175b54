"""RQ job functions.  They take ids only and are idempotent."""

from __future__ import annotations

import contextlib
import logging
import time

import redis

from projections import runner
from service import redis_roles
from service.adapters.eventstore import StoreUnavailable
from workers import context, metrics, tournaments

log = logging.getLogger(__name__)

#: Games taken from a shard's dirty set at a time.
DRAIN_BATCH = 64


def drain(shard: int) -> int:
    """Catch up every game marked dirty in ``shard`` (the API marks a game at
    each commit, ``service.nudge``), then linger (``Settings.projection_linger``):
    projecting new commits as they arrive, woken by each, without a new RQ job
    apiece.  Returns the number of games projected."""
    ctx = context.get()
    nudge = ctx.nudge
    started = time.perf_counter()
    nudge.take_over(shard)  # flagged "lingering" from now on: commits wake this job
    flagged = time.monotonic()
    projected, any_finished = _drain_dirty(ctx, shard)
    more, finished = _linger(ctx, shard, ctx.settings.projection_linger, flagged)
    projected += more
    any_finished = any_finished or finished
    if any_finished:
        _global_projections(ctx)
    metrics.JOB_SECONDS.labels("drain").observe(time.perf_counter() - started)
    return projected


def _linger(ctx: context.Context, shard: int, seconds: float, flagged: float) -> tuple[int, bool]:
    """Project commits as they wake the job for ``seconds`` (or until another
    job waits), then clear the flag (set at ``flagged``, monotonic) and drain
    once more."""
    from service.nudge import LINGER_POLL, LINGER_TTL

    nudge = ctx.nudge
    gather = ctx.settings.projection_gather
    projected, any_finished = 0, False
    deadline, refreshed = time.monotonic() + seconds, flagged
    # With seconds <= 0 (no lingering) the loop does not run: the job only
    # clears its flag and drains once more.
    try:
        while (left := deadline - time.monotonic()) > 0:
            if time.monotonic() - refreshed > LINGER_TTL / 4:
                nudge.keep_lingering(shard)
                refreshed = time.monotonic()
            popped, others = nudge.wait_and_pop(shard, min(LINGER_POLL, left), DRAIN_BATCH)
            if popped:
                more, finished = _drain_dirty(ctx, shard, popped)
                projected += more
                any_finished = any_finished or finished
            if others:
                break
            if popped and gather > 0:
                # Under load, let the next commits gather before the next wake: a
                # batch's round trips (wake, read, write) are shared by its games
                # (make bench: 2.4 games a batch at the closed loop's rate, 1.0 at
                # half of it, without this; docs/PERFORMANCE.md "The drain job gathers").
                # Idle, the next commit still wakes the job at once.
                time.sleep(gather)
    finally:
        nudge.stop_lingering(shard)
    # Commits that found us lingering just before we stopped only woke us:
    # their games are in the set.
    more, finished = _drain_dirty(ctx, shard)
    return projected + more, any_finished or finished


def _drain_dirty(ctx: context.Context, shard: int, first: list[str] | None = None) -> tuple[int, bool]:
    """Project every game in the shard's dirty set (``first``: a batch already
    popped from it); (games, any finished).

    A batch smaller than :data:`DRAIN_BATCH` emptied the set: no second pop.
    A game marked after it either wakes the lingering job (its flag is
    ``lingering``) or, with no flag, enqueues a new drain job (``ProjectionQueue.__call__``),
    so stopping there misses nothing."""
    projected = 0
    any_finished = False
    batch = first if first is not None else ctx.nudge.pop_dirty(shard, DRAIN_BATCH)
    while batch:
        try:
            results, failed = runner.catch_up_many(
                ctx.redis, ctx.store, batch, retention=ctx.settings.finished_retention_s, known=ctx.checkpoints
            )
        except (*redis_roles.UNAVAILABLE, StoreUnavailable):
            # A server away: put the batch back (the sweep would catch it up
            # anyway) and let RQ record the failure.
            with contextlib.suppress(redis.RedisError):
                ctx.nudge.put_back(shard, batch)
            raise
        for gid, exc in failed.items():
            # One game that cannot be folded must not hold up the others.
            log.error("drain: game %s could not be projected", gid, exc_info=exc)
        projected += len(results)
        ended = [gid for gid, (_, finished) in results.items() if finished]
        if ended:
            any_finished = True
            # A tournament's table may have just ended: its tournament advances (workers/tournaments.py).
            tournaments.games_finished(ctx, ended)
        batch = ctx.nudge.pop_dirty(shard, DRAIN_BATCH) if len(batch) >= DRAIN_BATCH else []
    return projected, any_finished


def _global_projections(ctx: context.Context) -> None:
    # A finished game changes the global projections (leaderboards).  They
    # read the global feed after their own checkpoint, so running them again
    # for a duplicated job is harmless; a finish not yet visible in the feed
    # (an older transaction still open) is folded by a later job or by the
    # periodic sweep.
    for consume in ctx.global_projections:
        consume(ctx.redis, ctx.store, False, None)


def sweep() -> int:
    """Catch up every lagging game, then the global projections."""
    ctx = context.get()
    started = time.perf_counter()
    caught = runner.sweep(ctx.redis, ctx.store, retention=ctx.settings.finished_retention_s)
    _global_projections(ctx)
    # The safety net: a tournament whose job was lost, or whose game ended while no worker ran.
    tournaments.sweep(ctx)
    metrics.JOB_SECONDS.labels("sweep").observe(time.perf_counter() - started)
    return caught
