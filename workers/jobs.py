"""RQ job functions.  They take ids only and are idempotent."""

from __future__ import annotations

import time

from projections import keys, leaderboards, runner
from workers import context, metrics

# Importing registers the leaderboard consumer in ``runner.global_consumers``,
# so that ``sweep`` (and ``project`` below) run it in the worker process too.
_ = leaderboards


def project(game_id: str) -> int:
    """Catch one game's read models up with its stream."""
    ctx = context.get()
    started = time.perf_counter()
    # Before reading the stream: an intent committed from now on enqueues a
    # new job (see the API's enqueuer), one committed before is read below.
    ctx.redis.delete(keys.pending(game_id))
    version = runner.project_game(ctx.redis, ctx.store, game_id)
    if ctx.redis.hget(keys.game(game_id), "status") == b"finished":
        # A finished game changes the global projections (leaderboards).  They
        # read the global feed after their own checkpoint, so running them
        # again for a duplicated job is harmless; a finish not yet visible in
        # the feed (an older transaction still open) is folded by a later job
        # or by the periodic sweep.
        for consumer in runner.global_consumers:
            consumer(ctx.redis, ctx.store, False, None)
    metrics.JOB_SECONDS.labels("project").observe(time.perf_counter() - started)
    return version


def sweep() -> int:
    """Catch up every lagging game, then the global projections."""
    ctx = context.get()
    started = time.perf_counter()
    caught = runner.sweep(ctx.redis, ctx.store)
    for consumer in runner.global_consumers:
        consumer(ctx.redis, ctx.store, False, None)
    metrics.JOB_SECONDS.labels("sweep").observe(time.perf_counter() - started)
    return caught
