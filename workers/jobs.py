"""RQ job functions.  They take ids only and are idempotent."""

from __future__ import annotations

import contextlib
import logging
import time

import redis

from projections import keys, leaderboards, runner
from service.eventstore import StoreUnavailable
from workers import context, metrics

log = logging.getLogger(__name__)

# Importing registers the leaderboard consumer in ``runner.global_consumers``,
# so that ``sweep`` (and ``project`` below) run it in the worker process too.
_ = leaderboards


def project(game_id: str) -> int:
    """Catch one game's read models up with its stream."""
    ctx = context.get()
    started = time.perf_counter()
    version, finished = runner.catch_up(ctx.redis, ctx.store, game_id)
    if finished:
        _global_consumers(ctx)
    metrics.JOB_SECONDS.labels("project").observe(time.perf_counter() - started)
    return version


#: Games taken from a shard's dirty set at a time.
DRAIN_BATCH = 64


def drain(shard: int) -> int:
    """Catch up every game marked dirty in ``shard`` (the API marks a game at
    each commit).  Returns the number of games projected."""
    ctx = context.get()
    r = ctx.redis
    started = time.perf_counter()
    # Before reading the set: a game marked from now on enqueues a new job
    # (see the API's enqueuer), one marked before is popped below.
    r.delete(keys.drain_pending(shard))
    projected = 0
    any_finished = False
    while batch := [gid.decode() for gid in r.spop(keys.dirty(shard), DRAIN_BATCH)]:
        try:
            results, failed = runner.catch_up_many(r, ctx.store, batch)
        except (redis.ConnectionError, redis.TimeoutError, StoreUnavailable):
            # A server away: put the batch back (the sweep would catch it up
            # anyway) and let RQ record the failure.
            with contextlib.suppress(redis.RedisError):
                r.sadd(keys.dirty(shard), *batch)
            raise
        for gid, exc in failed.items():
            # One game that cannot be folded must not hold up the others.
            log.error("drain: game %s could not be projected", gid, exc_info=exc)
        projected += len(results)
        any_finished = any_finished or any(finished for _, finished in results.values())
    if any_finished:
        _global_consumers(ctx)
    metrics.JOB_SECONDS.labels("drain").observe(time.perf_counter() - started)
    return projected


def _global_consumers(ctx: context.Context) -> None:
    # A finished game changes the global projections (leaderboards).  They
    # read the global feed after their own checkpoint, so running them again
    # for a duplicated job is harmless; a finish not yet visible in the feed
    # (an older transaction still open) is folded by a later job or by the
    # periodic sweep.
    for consumer in runner.global_consumers:
        consumer(ctx.redis, ctx.store, False, None)


def sweep() -> int:
    """Catch up every lagging game, then the global projections."""
    ctx = context.get()
    started = time.perf_counter()
    caught = runner.sweep(ctx.redis, ctx.store)
    for consumer in runner.global_consumers:
        consumer(ctx.redis, ctx.store, False, None)
    metrics.JOB_SECONDS.labels("sweep").observe(time.perf_counter() - started)
    return caught
