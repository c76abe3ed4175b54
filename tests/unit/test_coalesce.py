"""``service.coalesce``: the group commit behind the projection nudge
(docs/PERFORMANCE.md, "The nudge's group commit").  Threads stand in for the gevent
worker's greenlets (the same primitives, patched there)."""

from __future__ import annotations

import threading
import time

import pytest

from service.coalesce import Coalescer


class _Gate:
    """A ``send`` that records each batch and holds the first one until released."""

    def __init__(self, fail_with: BaseException | None = None) -> None:
        self.batches: list[list[int]] = []
        self.first_in = threading.Event()
        self.release = threading.Event()
        self.fail_with = fail_with
        self.lock = threading.Lock()

    def __call__(self, items: list[int]) -> None:
        with self.lock:
            self.batches.append(list(items))
            first = len(self.batches) == 1
        if first:
            self.first_in.set()
            assert self.release.wait(10)
            if self.fail_with is not None:
                raise self.fail_with


def _start(target, *args) -> threading.Thread:
    t = threading.Thread(target=target, args=args, daemon=True)
    t.start()
    return t


def _wait_for(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_alone_a_call_is_sent_at_once_by_itself():
    sent: list[list[str]] = []
    c = Coalescer(sent.append)
    c("a")
    c("b")
    assert sent == [["a"], ["b"]]
    assert (c.batches, c.items) == (2, 2)


def test_calls_during_a_send_go_together_in_the_next_and_each_returns_once_its_item_is_sent():
    gate = _Gate()
    c = Coalescer(gate)
    returned: list[int] = []

    def call(i: int) -> None:
        c(i)
        returned.append(i)

    leader = _start(call, 0)
    assert gate.first_in.wait(5)
    followers = [_start(call, i) for i in range(1, 6)]
    # Everyone queued behind the send in flight; nobody has returned yet.
    _wait_for(lambda: len(c._open.items) == 5)
    assert returned == []
    gate.release.set()
    for t in [leader, *followers]:
        t.join(5)
    assert gate.batches == [[0], [1, 2, 3, 4, 5]]
    assert sorted(returned) == [0, 1, 2, 3, 4, 5]
    assert (c.batches, c.items) == (2, 6)


def test_a_leader_sends_its_own_batch_only_and_hands_the_next_to_a_caller_of_that_batch():
    """No starvation: the leader's call returns after its own round trip even
    while more calls keep arriving."""
    gate = _Gate()
    c = Coalescer(gate)
    leader_done = threading.Event()

    def lead() -> None:
        c(0)
        leader_done.set()

    _start(lead)
    assert gate.first_in.wait(5)
    second = threading.Event()
    slow_second: list[list[int]] = []

    # The next batch's sender is held in its send: the first leader must be done regardless.
    def held_send(items: list[int]) -> None:
        slow_second.append(items)
        second.wait(10)

    followers = [_start(c, i) for i in (1, 2)]
    _wait_for(lambda: len(c._open.items) == 2)
    c._send = held_send  # the batch of 1 and 2 goes through the held send
    gate.release.set()
    assert leader_done.wait(5), "the leader waited for the batch behind it"
    _wait_for(lambda: slow_second == [[1, 2]])
    second.set()
    for t in followers:
        t.join(5)
        assert not t.is_alive()


def test_a_failed_send_fails_every_caller_of_its_batch_and_the_next_batch_still_goes():
    gate = _Gate(fail_with=ConnectionError("away"))
    c = Coalescer(gate)
    errors: list[BaseException] = []

    def call(i: int) -> None:
        try:
            c(i)
        except ConnectionError as exc:
            errors.append(exc)

    leader = _start(call, 0)
    assert gate.first_in.wait(5)
    followers = [_start(call, i) for i in (1, 2)]
    _wait_for(lambda: len(c._open.items) == 2)
    gate.release.set()
    for t in [leader, *followers]:
        t.join(5)
    # The leader's batch failed (its caller saw it); the next batch was sent by one of its own.
    assert len(errors) == 1
    assert gate.batches == [[0], [1, 2]]
    c(3)  # and the coalescer is free again
    assert gate.batches[-1] == [3]


def test_a_caller_whose_batch_is_never_handed_over_sends_alone_after_its_patience():
    sent: list[list[int]] = []
    c = Coalescer(sent.append, patience=0.05)
    c._busy = True  # as if a leader had been lost without handing over
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("service.coalesce.log.warning", lambda *a, **k: None)
        c(7)
    assert sent == [[7]]
