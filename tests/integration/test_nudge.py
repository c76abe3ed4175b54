"""The projection nudge's group commit against a real Redis (a private server: the
test floods shard keys and queues that the session's own nudge uses)."""

from __future__ import annotations

import threading
import uuid

import pytest
import redis
from rq import Queue

from service import nudge
from service.nudge import ProjectionQueue, shard_of


@pytest.fixture(scope="module")
def private_redis(private_redis_server):
    return redis.Redis.from_url(private_redis_server.url())


def test_concurrent_commits_are_marked_every_one_in_fewer_round_trips(private_redis):
    """32 threads nudge 8 games each at once, over 3 shards: every game ends in its
    shard's dirty set, each shard gets one drain job (the others ride on its flag),
    and the marks took fewer round trips than commits (a mark in flight gathers
    the commits behind it)."""
    r = private_redis
    r.flushdb()
    queue = Queue("qd-nudge-test", connection=r)
    n = ProjectionQueue(r, queue, shards=3)
    games = [[str(uuid.uuid4()) for _ in range(8)] for _ in range(32)]
    barrier = threading.Barrier(len(games))

    def commit(mine: list[str]) -> None:
        barrier.wait()
        for gid in mine:
            n(gid)

    threads = [threading.Thread(target=commit, args=(mine,)) for mine in games]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    every = [gid for mine in games for gid in mine]
    for shard in range(3):
        want = {gid.encode() for gid in every if shard_of(gid, 3) == shard}
        assert r.smembers(nudge.dirty(shard)) == want
        assert r.get(nudge.drain_pending(shard)) == b"queued"
    assert sorted(job.args[0] for job in queue.jobs) == [0, 1, 2]
    assert n._coalesced.items == len(every)
    assert n._coalesced.batches < len(every)


def test_a_lingering_drain_job_is_woken_by_a_batch(private_redis):
    r = private_redis
    r.flushdb()
    n = ProjectionQueue(r, Queue("qd-nudge-test", connection=r), shards=1)
    n.take_over(0)
    n._mark_all(["g1", "g2", "g3"])
    assert r.smembers(nudge.dirty(0)) == {b"g1", b"g2", b"g3"}
    assert r.llen(nudge.wake(0)) == 1
    popped, _ = n.wait_and_pop(0, 1, 64)
    assert sorted(popped) == ["g1", "g2", "g3"]


def test_a_batch_larger_than_lua_can_unpack_is_marked_whole(private_redis):
    r = private_redis
    r.flushdb()
    n = ProjectionQueue(r, Queue("qd-nudge-test", connection=r), shards=1)
    games = [f"g{i}" for i in range(12_345)]
    n._mark_all(games)
    assert r.scard(nudge.dirty(0)) == len(games)


def test_with_redis_away_a_batch_is_counted_and_nothing_is_raised():
    from service import metrics

    away = redis.Redis(port=1, socket_connect_timeout=0.2)
    n = ProjectionQueue(away, Queue("qd-nudge-test", connection=away), shards=2)
    before = metrics.ENQUEUE_FAILURES._value.get()
    n._mark_all(["a", "b", "c"])
    assert metrics.ENQUEUE_FAILURES._value.get() == before + 3


def test_a_tournaments_commit_enqueues_its_projection_and_after_a_pairing_its_advance(private_redis):
    """The nudge's tournament entry point: each commit its own projection job; a commit
    that paired a round (or aborted the tournament) the worker's advance too."""
    from types import SimpleNamespace

    r = private_redis
    r.flushdb()
    queue = Queue("qd-nudge-test", connection=r)
    n = ProjectionQueue(r, queue, shards=1)
    n.tournament("t1", [SimpleNamespace(type="PlayerRegistered")])
    n.tournament("t2", [SimpleNamespace(type="TableStarted"), SimpleNamespace(type="RoundPaired")])
    n.tournament("t3")
    jobs = [(job.func_name, job.args) for job in queue.jobs]
    assert jobs == [
        (nudge.PROJECT_TOURNAMENT_JOB, ("t1",)),
        (nudge.PROJECT_TOURNAMENT_JOB, ("t2",)),
        (nudge.ADVANCE_TOURNAMENT_JOB, ("t2",)),
        (nudge.PROJECT_TOURNAMENT_JOB, ("t3",)),
    ]
    assert r.scard(nudge.dirty(0)) == 0, "a tournament is not a game: nothing marked dirty"
