"""``python -m workers``: one RQ worker for projection jobs, plus a sweep
that catches up any lagging game at start and every ``QD_SWEEP_SECONDS``, and
the clocks' scheduler, which writes the timeouts of seats whose time has run
out (``workers/timeouts.py``, every ``QD_TIMEOUT_TICK_SECONDS``).

A ``SimpleWorker`` runs jobs in-process (no fork per job): projection jobs are
short, and forking would cost more than the job itself.
"""

from __future__ import annotations

import argparse
import logging
import threading
import time

import redis
from rq import Queue

from service.bootstrap import freeze_startup_heap, rq_connection
from service.logs import configure_logging
from workers import context, jobs, timeouts
from workers.rq_worker import ProjectionWorker

log = logging.getLogger("workers")


def sweep_forever(interval: float, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            caught = jobs.sweep()
            if caught:
                log.info("sweep caught up %d game(s)", caught)
        except Exception as exc:  # PostgreSQL or Redis away: try again next round
            log.warning("sweep failed (%s); retrying in %.0fs", type(exc).__name__, interval)
        stop.wait(interval)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers", description=__doc__)
    parser.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    args = parser.parse_args(argv)
    # The composition root builds every component (and imports every
    # engine) before the first job, not during it.
    components = context.get()
    settings = components.settings
    configure_logging(settings.log_level)
    stop = threading.Event()
    interval = settings.sweep_seconds
    if args.burst:
        jobs.sweep()
        timeouts.tick(components, timeouts.service(components))
    else:
        threading.Thread(target=sweep_forever, args=(interval, stop), daemon=True, name="sweep").start()
        tick = settings.timeout_tick_seconds
        threading.Thread(target=timeouts.run_forever, args=(tick, stop), daemon=True, name="timeouts").start()
    conn = rq_connection(settings)
    freeze_startup_heap()
    log.info("worker on queue %s (sweep every %.0fs)", settings.queue_name, interval)
    while True:
        try:
            worker = ProjectionWorker([Queue(settings.queue_name, connection=conn)], connection=conn)
            worker.work(burst=args.burst, logging_level=settings.rq_log_level)
            return 0
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            # Redis went away: wait for it rather than die (no manual restart).
            log.warning("redis unavailable (%s); retrying in 1s", exc)
            time.sleep(1)
        finally:
            if args.burst:
                stop.set()


if __name__ == "__main__":
    raise SystemExit(main())
