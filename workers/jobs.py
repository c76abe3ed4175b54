"""RQ job functions.  They take ids only and are idempotent."""

from __future__ import annotations

import contextlib
import logging
import time

import redis
from rq import Queue

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
#: A lingering job waits this long for a wake-up before it checks whether
#: other jobs wait for the worker.
LINGER_POLL = 0.05
#: TTL of the "lingering" flag, refreshed while the job lives: a worker killed
#: while lingering holds its shard up this long at most (and the sweep runs).
LINGER_TTL = 2

#: The flag's value while a drain job lingers (see ``service/app.py``).
LINGERING = b"lingering"
#: Stop lingering: delete the flag only if it still says "lingering".  If it
#: expired meanwhile and a commit flagged a new job "queued", the flag is that
#: job's and stays.
_UNLINGER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
end
"""


def drain(shard: int) -> int:
    """Catch up every game marked dirty in ``shard`` (the API marks a game at
    each commit), then linger (``Settings.projection_linger``): projecting
    new commits as they arrive, woken by each, without a new RQ job apiece.
    Returns the number of games projected."""
    ctx = context.get()
    r = ctx.redis
    started = time.perf_counter()
    # Before reading the set: a game marked from now on enqueues a new job
    # (see the API's enqueuer), one marked before is popped below.
    r.delete(keys.drain_pending(shard))
    projected, any_finished = _drain_dirty(ctx, shard)
    linger = ctx.settings.projection_linger
    if linger > 0 and r.set(keys.drain_pending(shard), LINGERING, nx=True, ex=LINGER_TTL):
        more, finished = _linger(ctx, shard, linger)
        projected += more
        any_finished = any_finished or finished
    if any_finished:
        _global_consumers(ctx)
    metrics.JOB_SECONDS.labels("drain").observe(time.perf_counter() - started)
    return projected


def _linger(ctx: context.Context, shard: int, seconds: float) -> tuple[int, bool]:
    r = ctx.redis
    flag, wake = keys.drain_pending(shard), keys.wake(shard)
    # RQ's list for our queue: another job waiting there means this worker is
    # wanted elsewhere (another shard, a project job), so stop lingering.
    queue_key = Queue(ctx.settings.queue_name, connection=r).key
    projected, any_finished = 0, False
    now = time.monotonic()
    deadline, refreshed = now + seconds, now
    try:
        while (left := deadline - time.monotonic()) > 0:
            if r.brpop([wake], timeout=min(LINGER_POLL, left)):
                more, finished = _drain_dirty(ctx, shard)
                projected += more
                any_finished = any_finished or finished
            if r.llen(queue_key):
                break
            if time.monotonic() - refreshed > LINGER_TTL / 4:
                r.expire(flag, LINGER_TTL)
                refreshed = time.monotonic()
    finally:
        r.eval(_UNLINGER, 1, flag, LINGERING)
    # Commits that found us lingering just before we stopped only woke us:
    # their games are in the set.
    more, finished = _drain_dirty(ctx, shard)
    return projected + more, any_finished or finished


def _drain_dirty(ctx: context.Context, shard: int) -> tuple[int, bool]:
    """Project every game in the shard's dirty set; (games, any finished)."""
    r = ctx.redis
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
    return projected, any_finished


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
