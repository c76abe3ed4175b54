"""The streams' slots in Redis: how many streams one client holds open at once
(docs/API.md "Streams"; ``service/http/streams.py`` takes them for each game
stream, account stream and live events feed, and answers 429
``too_many_streams`` when one is full).

A sorted set per client (address or account key): member = one open stream,
score = when its lease ends (Redis server time).  Leases are renewed at every
ping, so a process that died without releasing its slots frees them within a
lease.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

import redis

#: KEYS: the client's set; ARGV: this stream's member, the lease in seconds, the
#: client's limit.  Drops the leases that ran out, then takes one if there is room.
ACQUIRE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], t + tonumber(ARGV[2]), ARGV[1])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""
#: Renewing also puts back a slot that Redis lost (restarted empty): the stream still runs.
RENEW = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZADD', KEYS[1], t + tonumber(ARGV[2]), ARGV[1])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""


def slot_key(scope: str, who: str) -> str:
    """The set of ``who``'s open streams (``scope``: ``address`` or ``key``)."""
    # Hash tag on the client: one slot per client on a cluster.
    return f"streams:{scope}:{{{who}}}"


class SlotsFull(Exception):
    """One of the stream's clients holds ``limit`` streams already (answered 429)."""

    def __init__(self, scope: str, limit: int) -> None:
        super().__init__(f"{scope}: {limit}")
        self.scope, self.limit = scope, limit


class StreamSlots:
    """One stream's slots: :meth:`acquire` (or :class:`SlotsFull`), :meth:`renew`
    at each ping, :meth:`release` at its end.  Redis errors of :meth:`acquire`
    reach the caller (the app answers 503); renewing and releasing go on
    without Redis."""

    def __init__(self, client: Any, lease_seconds: float) -> None:
        """``client``: the read side's Redis (``Components.redis``)."""
        self.r = client
        self.lease = lease_seconds
        self.member = secrets.token_hex(8)
        self.held: list[str] = []

    def acquire(self, clients: list[tuple[str, str, int]]) -> None:
        """Take one slot for each ``(scope, who, limit)`` (limit 0: unlimited),
        all or none: :class:`SlotsFull` for the first that is full, after
        giving back those taken."""
        for scope, who, limit in clients:
            if limit <= 0:
                continue
            key = slot_key(scope, who)
            if not self.r.eval(ACQUIRE, 1, key, self.member, self.lease, limit):
                self.release()
                raise SlotsFull(scope, limit)
            self.held.append(key)

    def renew(self) -> None:
        for key in self.held:
            # Redis away: the stream goes on; its lease may lapse, which frees a slot.
            with contextlib.suppress(redis.RedisError):
                self.r.eval(RENEW, 1, key, self.member, self.lease)

    def release(self) -> None:
        for key in self.held:
            with contextlib.suppress(redis.RedisError):  # else the lease runs out by itself
                self.r.zrem(key, self.member)
        self.held.clear()
