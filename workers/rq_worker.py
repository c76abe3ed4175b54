"""The RQ worker class the projection worker runs (``python -m workers``).

A ``SimpleWorker`` (jobs in-process, no fork per job) that stops within a second of its
SIGTERM.  RQ 3.0's ``unsubscribe`` (its warm shutdown) sends UNSUBSCRIBE, then stops the
worker's pub/sub thread; since redis-py 8.2, ``PubSubWorkerThread.stop()`` waits for that
thread, and when the thread had already read the UNSUBSCRIBE reply it was back in a read of up
to 60 s (RQ's ``sleep_time``).  So a stop could take a minute: under ``docker compose restart``
the engine killed the worker when ``stop_grace_period`` (30 s) ran out (tests/compose).
Clearing the thread's run flag before the UNSUBSCRIBE makes the reply end its last read.
"""

from __future__ import annotations

from rq import SimpleWorker


class ProjectionWorker(SimpleWorker):
    def unsubscribe(self) -> None:
        thread = self.pubsub_thread
        if thread is not None:
            try:
                thread.stop(timeout=0)  # redis-py >= 8.2: clear the flag, do not wait yet
            except TypeError:
                thread.stop()  # older redis-py: clears the flag and never waits
        super().unsubscribe()
