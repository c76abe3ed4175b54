"""Live delivery: how a change in a read model reaches the requests that wait
for it, each module one job.

* ``hub.py``: the process's hub, its pub/sub listener, the cells waiters sleep
  on, their subscriptions and the safety re-reads;
* ``history.py``: a streamed game's recent boards, shaped once per kind of viewer;
* ``direct.py``: the streams at the head of their game, which the listener
  writes itself through a :class:`~service.http.live.direct.Sink`;
* ``waits.py``: :func:`~service.http.live.waits.wait_until`, a read that waits
  for a version (``?min_version``);
* ``framing.py``: NDJSON, SSE and HTTP chunks, for the streams and the feeds.

The streams themselves (what they send, their slots and limits) are
``service/http/streams.py``; the live events feed is ``service/http/audit.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.http.live.hub import Hub

#: Where ``create_app`` keeps the process's hub.
EXTENSION = "quarterdeck.hub"


def current_hub() -> Hub:
    """This app's hub (inside a request)."""
    from flask import current_app

    return current_app.extensions[EXTENSION]  # create_app put a Hub there
