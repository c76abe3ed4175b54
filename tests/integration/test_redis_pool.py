"""One process's Redis connections are bounded (``Settings.redis_pool_max``,
``service/bootstrap.py``): a crowd of concurrent reads, as when one announcement wakes
hundreds of ``?min_version`` waiters, queues for the pool's connections instead of opening
one each, every read is answered, and a read that finds no connection in time fails as
Redis being unavailable (a 503), not by waiting for ever.  On a private Redis server, so
that its client count is this test's alone."""

from __future__ import annotations

import threading

import pytest
import redis

from service.bootstrap import bootstrap


def test_a_crowd_of_reads_shares_the_pools_connections(settings, private_redis_server):
    ctx = bootstrap(settings.with_(redis_url=private_redis_server.url(), redis_pool_max=4))
    try:
        server = redis.Redis.from_url(private_redis_server.url())
        server.set("k", "v")
        baseline = server.info("clients")["connected_clients"]
        answers: list[bytes | None] = []
        peak = [0]
        done = threading.Event()
        start = threading.Barrier(201)

        def sample() -> None:  # one connection of its own, counted in the baseline
            start.wait()
            while not done.is_set():
                peak[0] = max(peak[0], server.info("clients")["connected_clients"] - baseline)

        def read() -> None:
            start.wait()
            # A short blocking pop holds each connection long enough for the crowd to pile up.
            ctx.redis.blpop(["nothing"], timeout=0.02)
            answers.append(ctx.redis.get("k"))

        sampler = threading.Thread(target=sample)
        sampler.start()
        threads = [threading.Thread(target=read) for _ in range(200)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done.set()
        sampler.join()
        assert answers == [b"v"] * 200
        # The crowd held at most the pool's four connections at once (without the
        # bound, 200 threads open about 200).
        assert 1 <= peak[0] <= 4
    finally:
        ctx.close()


def test_a_read_that_finds_no_connection_in_time_fails_as_redis_unavailable(settings, private_redis_server):
    ctx = bootstrap(settings.with_(redis_url=private_redis_server.url(), redis_pool_max=1, redis_pool_timeout=0.2))
    try:
        held = ctx.redis.connection_pool.get_connection()
        try:
            with pytest.raises(redis.ConnectionError):
                ctx.redis.get("k")
        finally:
            ctx.redis.connection_pool.release(held)
        assert ctx.redis.get("absent") is None  # the connection is back: reads go on
    finally:
        ctx.close()
