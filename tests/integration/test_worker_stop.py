"""The projection worker's warm shutdown is prompt (docs/RELIABILITY.md, "The production shape,
run": `docker compose restart worker` stops it by its SIGTERM, not by a kill).

RQ's warm shutdown unsubscribes the worker's pub/sub channel and stops its pub/sub thread.  When
that thread reads the UNSUBSCRIBE reply before it is told to stop, it goes back to a read of up
to 60 s, and redis-py's ``stop()`` waits for it.  Here the main thread is held for a moment right
after the UNSUBSCRIBE is sent, as a busy machine holds it, which makes that order certain.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis
from rq import Queue, SimpleWorker

from service.config import Settings
from workers.rq_worker import ProjectionWorker

#: Longer than a prompt stop takes, far shorter than RQ's 60 s pub/sub read.
PROMPT = 5.0


def unsubscribe_seconds(worker_class: type[SimpleWorker], settings: Settings) -> float:
    conn = redis.Redis.from_url(settings.redis_url)
    worker = worker_class([Queue("qd-test-stop", connection=conn)], connection=conn)
    worker.subscribe()
    time.sleep(0.3)  # the pub/sub thread is in its read
    send = worker.pubsub.unsubscribe

    def held_after_sending(*args, **kwargs):
        answer = send(*args, **kwargs)
        time.sleep(0.5)  # the thread reads the reply meanwhile
        return answer

    worker.pubsub.unsubscribe = held_after_sending
    started = time.monotonic()
    stopper = threading.Thread(target=worker.unsubscribe, daemon=True)
    stopper.start()
    stopper.join(PROMPT)
    took = time.monotonic() - started
    if stopper.is_alive():  # leave nothing reading: wake the thread with a message of its own
        worker.pubsub_thread._running.clear()
        conn.publish(worker.pubsub_channel_name, '{"command": "none"}')
        stopper.join(PROMPT)
    conn.close()
    return took


def test_the_projection_worker_unsubscribes_promptly(settings: Settings) -> None:
    assert unsubscribe_seconds(ProjectionWorker, settings) < PROMPT


@pytest.mark.skipif(
    tuple(int(x) for x in redis.__version__.split(".")[:2]) < (8, 2),
    reason="redis-py before 8.2: stop() did not wait for the pub/sub thread",
)
def test_rqs_own_worker_waits_for_its_pubsub_read(settings: Settings) -> None:
    """The reason for ProjectionWorker: RQ's SimpleWorker, in the same order, is not prompt."""
    assert unsubscribe_seconds(SimpleWorker, settings) >= PROMPT
