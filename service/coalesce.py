"""Group commit for a call that costs a round trip.

While one call is in flight, the calls that arrive wait, and go together in the next one:
one round trip for all of them.  Each caller returns once its own item has been sent (or the
send failed, with the same exception), as it would have alone, so nothing downstream can
tell the difference except that the round trips are fewer.

The leader of a batch sends that batch only, never the ones queued behind it: it hands the
next batch to the first of its own callers to wake, so no caller's answer is held up by
other callers' round trips beyond the one in flight when it arrived (no leader starvation).

Threads and gevent's greenlets alike (``threading`` is patched in the gevent worker, and the
locked sections do no I/O, so they never switch).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Batch(Generic[T]):
    __slots__ = ("claimed", "error", "items", "sent", "turn")

    def __init__(self) -> None:
        self.items: list[T] = []
        #: A caller has taken the batch to send it.
        self.claimed = False
        #: Set when the batch needs a leader (the one before it was sent).
        self.turn = threading.Event()
        #: Set once the batch has been sent (or its send failed: ``error``).
        self.sent = threading.Event()
        self.error: BaseException | None = None


class Coalescer(Generic[T]):
    """``coalescer(item)`` sends ``item`` through ``send(items)``, in a batch with
    the items of the calls made while the previous batch was in flight.

    ``patience``: seconds a waiting caller trusts the batch ahead of it to hand
    over; past that it sends its own item alone (a safety valve: a leader always
    hands over in a ``finally``, so this only matters if a thread is lost)."""

    def __init__(self, send: Callable[[list[T]], None], patience: float = 5.0) -> None:
        self._send = send
        self._patience = patience
        self._lock = threading.Lock()
        self._open: _Batch[T] = _Batch()
        self._busy = False
        #: Batches sent and items in them (for tests and the docs' measurements).
        self.batches = 0
        self.items = 0

    def __call__(self, item: T) -> None:
        with self._lock:
            batch = self._open
            batch.items.append(item)
            lead = not self._busy
            if lead:
                self._busy = True
                self._claim(batch)
        if not lead:
            if not batch.turn.wait(self._patience):
                self._alone(item)
                return
            with self._lock:
                lead = not batch.claimed
                if lead:
                    self._claim(batch)
            if not lead:
                if not batch.sent.wait(self._patience):
                    self._alone(item)
                    return
                if batch.error is not None:
                    raise batch.error
                return
        self._lead(batch)

    def _alone(self, item: T) -> None:
        log.warning("coalescer: the batch ahead did not hand over within %g s; sending alone", self._patience)
        self._send([item])

    def _claim(self, batch: _Batch[T]) -> None:
        """Take ``batch`` (the open one) to send it; later calls gather in a new one.
        Under the lock."""
        batch.claimed = True
        self._open = _Batch()

    def _lead(self, batch: _Batch[T]) -> None:
        try:
            self.batches += 1
            self.items += len(batch.items)
            self._send(batch.items)
        except BaseException as exc:
            batch.error = exc
            raise
        finally:
            batch.sent.set()
            with self._lock:
                queued = self._open
                if queued.items:
                    queued.turn.set()  # the first of its callers to wake sends it
                else:
                    self._busy = False
