"""The analysis worker: a finished game's analysis, computed on request (docs/API.md "Analysis").

``GET /v1/games/{id}/analysis`` enqueues :func:`run` on the ``analysis`` queue (``QD_ANALYSIS_QUEUE``;
``service/adapters/analyses.py`` bounds who may enqueue what).  A job reads the game's stored events,
refuses a game that has not finished, folds them, and lets the level-3 house bot judge each seat's
decisions from that seat's view only (``service/bots/analysis.py``), within ``QD_ANALYSIS_SEARCH_CPU_S`` of
CPU per decision (``time.thread_time``); the result is kept in Redis and the request's mark lifted.

``python -m workers.analysis`` runs one worker; ``make run`` starts one.  It runs one job at a time, so a
process spends at most one analysis' CPU at a time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

import redis
from rq import Queue

from service.bootstrap import analyses, rq_connection
from service.bots import analysis
from service.domain.pipeline import GAME_CREATED, GAME_FINISHED, PLATFORM_COMMANDS, PLATFORM_EVENTS
from service.domain.records import StoredEvent
from service.games import registry
from service.games.base import Event
from workers import context

log = logging.getLogger(__name__)


def steps(events: Sequence[StoredEvent]) -> list[analysis.Step]:
    """The stream as the analysis reads it: each engine event, and at the first event of each intent a
    seat sent itself (not a resignation, a timeout, an abort or an automatic step) that seat and intent."""
    out: list[analysis.Step] = []
    previous: Any = object()
    for e in events:
        meta = e.meta or {}
        batch = meta.get("intent_id")
        first = batch is not None and batch != previous
        previous = batch
        seat, intent = meta.get("seat"), meta.get("intent")
        own = (
            first
            and isinstance(seat, int)
            and isinstance(intent, dict)
            and intent.get("type") not in PLATFORM_COMMANDS
            and not meta.get("auto")
            and e.type not in PLATFORM_EVENTS
        )
        out.append(
            analysis.Step(
                e.seq,
                None if e.type in PLATFORM_EVENTS else Event(e.type, e.data),
                seat if own else None,
                intent if own else None,
            )
        )
    return out


def analyse_events(
    game_id: str, events: Sequence[StoredEvent], *, search_cpu_s: float, cpu_clock: Any = time.thread_time
) -> dict[str, Any]:
    """The analysis of a finished game's stored stream (``ValueError`` for one that has not finished)."""
    if not events or events[0].type != GAME_CREATED:
        raise ValueError("the stream does not start with GameCreated")
    if events[-1].type != GAME_FINISHED:
        raise ValueError("the game has not finished")
    created = events[0].data
    engine = registry.get(created["game"], created["rules_version"])
    budget = analysis.Budget(search_cpu_s=search_cpu_s)
    seed = hashlib.sha256(f"analysis|{game_id}".encode()).digest()
    started = time.thread_time()
    result = analysis.analyse(
        engine, steps(events), len(created["players"]), seed=seed, budget=budget, cpu_clock=cpu_clock
    )
    result["cpu_seconds"] = round(time.thread_time() - started, 3)
    return result


def run(game_id: str) -> str:
    """The job: analyse ``game_id`` and keep the result; ``"finished"`` when kept, ``"running"`` for a
    game that has not finished (nothing kept)."""
    ctx = context.get()
    store = analyses(ctx)
    try:
        events = ctx.store.read(game_id, after=0)
        if not events or events[-1].type != GAME_FINISHED:
            store.release(game_id)
            return "running"
        result = analyse_events(game_id, events, search_cpu_s=ctx.settings.analysis_search_cpu_s)
        store.keep(game_id, result)
    except BaseException:
        store.release(game_id)
        raise
    log.info("analysed game %s: %d events, %.1f s CPU", game_id, len(events), result["cpu_seconds"])
    return "finished"


def main(argv: list[str] | None = None) -> int:
    """``python -m workers.analysis``: one RQ worker on the analysis queue."""
    import argparse

    from service.logs import configure_logging
    from workers.rq_worker import ProjectionWorker

    parser = argparse.ArgumentParser(prog="python -m workers.analysis", description=__doc__.split("\n\n")[0])
    parser.add_argument("--burst", action="store_true", help="run the queued jobs, then exit")
    args = parser.parse_args(argv)
    ctx = context.get()
    settings = ctx.settings
    configure_logging(settings.log_level)
    conn = rq_connection(settings)
    queue = Queue(settings.analysis_queue, connection=conn)
    log.info("analysis worker on queue %s", settings.analysis_queue)
    while True:
        try:
            worker = ProjectionWorker([queue], connection=conn)
            worker.work(burst=args.burst, logging_level=os.environ.get("QD_RQ_LOG_LEVEL", "WARNING"))
            return 0
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("redis unavailable (%s); retrying in 1s", exc)
            time.sleep(1)


if __name__ == "__main__":
    raise SystemExit(main())
