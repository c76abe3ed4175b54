"""The one wait for a read model: ``?min_version`` reads (``games.read_game``) and
a tournament's (``tournaments.py``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from service.http.live.hub import Hub

T = TypeVar("T")

#: How often :func:`wait_until` looks again at a read model that nothing
#: announces (``game_id`` None: a tournament's), in seconds.
POLL_SECONDS = 0.05


def wait_until(
    hub: Hub | None,
    game_id: str | None,
    read: Callable[[], T],
    done: Callable[[T], bool],
    timeout: float,
    on_wake: Callable[[T], None] | None = None,
) -> T:
    """``read()`` until ``done(value)`` or ``timeout`` seconds, and return the
    last value read.  A game's (``game_id``) sleeps on its announcements in
    between, never polling; a read model that nothing announces (``game_id``
    None) is looked at again every ``POLL_SECONDS``.  ``on_wake(value)`` runs
    after each re-read that is not done."""
    deadline = time.monotonic() + timeout
    with hub.watch(game_id) if hub is not None and game_id is not None else contextlib.nullcontext() as watch:
        value = read()
        while not done(value) and not (hub is not None and hub.closing):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if watch is not None:
                watch.wait(left)
            else:
                time.sleep(min(POLL_SECONDS, left))
            value = read()
            if on_wake is not None and not done(value):
                on_wake(value)
    return value
