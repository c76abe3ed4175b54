"""RQ job functions.  They take ids only and are idempotent."""

from __future__ import annotations

import time

from projections import runner
from workers import context, metrics


def project(game_id: str) -> int:
    """Catch one game's read models up with its stream."""
    ctx = context.get()
    started = time.perf_counter()
    version = runner.project_game(ctx.redis, ctx.store, game_id)
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
