"""gunicorn's settings for the API: one file for ``make run``
(``devtools/run.py``), ``compose.yaml`` and the ``Dockerfile``, loaded as
``gunicorn -c python:service.http.gunicorn_conf service.http.wsgi:app``.

Why gevent (docs/PERFORMANCE.md, "Live delivery"): waits (``?min_version``),
live feeds and streams spend their time idle.  Under the threaded worker each
held a thread, and 16 of them (or 16 half-sent requests) took the API down.
Under gevent each costs a socket and a greenlet; psycopg 3 (from 3.1.14)
and redis-py cooperate with gevent's monkey patching, which the worker applies
before it imports the app (so no ``--preload``: psycopg picks its wait
function at import).

Slow clients: the gevent worker reads a request's line and headers under a
``keepalive``-second deadline and drops the connection after it; bodies are
read under ``QD_BODY_READ_SECONDS`` (``service/http/common.py``: 408); a
stream's writes under ``WRITE_SECONDS`` (``service/http/streams.py``).

This module is imported by gunicorn's master: it imports nothing of ours at
the top (psycopg must not be imported before the worker patches).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

worker_class = "gevent"
#: Connections one worker serves at once (idle followers included).
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS") or 4000)
#: Seconds to receive a request's line and headers (and between requests on a
#: keep-alive connection): a client that sends half a header is dropped then.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE") or 5)
#: The gevent worker only heartbeats; a request is never cut for its length.
timeout = 30
graceful_timeout = 20


def on_starting(server: Any) -> None:
    """Room for every connection: raise the open-files limit to what the
    workers may hold (within the hard limit)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = server.cfg.worker_connections + 512
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))


def post_fork(server: Any, worker: Any) -> None:
    """gunicorn's own refusals (an unparsable request) answer in our JSON error
    shape, not its HTML page (``service/http/gunicorn_errors.py``)."""
    from service.http import gunicorn_errors

    gunicorn_errors.install()


def post_worker_init(worker: Any) -> None:
    """The app is loaded: freeze what it built (``freeze_startup_heap``).
    When the worker is told to stop (SIGTERM: ``alive`` turns false), end
    every stream with a final line the client can resume from, so that the
    worker drains within its graceful timeout instead of cutting them."""

    def watch() -> None:
        while worker.alive:
            time.sleep(0.2)
        from service.http.live import hub

        hub.shutdown_all()

    threading.Thread(target=watch, name="qd-shutdown-watch", daemon=True).start()
    # The app is loaded by now (gunicorn calls this hook after load_wsgi).
    from service.bootstrap import freeze_startup_heap

    freeze_startup_heap()


def worker_exit(server: Any, worker: Any) -> None:
    """Close the worker's connections while its hub still runs (its PostgreSQL
    pool's threads are greenlets, which cannot be joined once it is gone)."""
    app = getattr(worker, "wsgi", None)
    found = getattr(app, "extensions", {}).get("quarterdeck")
    if found is not None:
        try:
            found.components.close()
        except Exception:  # exiting anyway; nothing to save
            server.log.debug("closing the worker's connections failed", exc_info=True)
