"""Redis by role: the queue's plain Redis and the read side's Redis, which may be
a Redis Cluster (docs/SCALING.md, "Redis by role").

A read-side URL names a cluster with the query flag ``cluster=1``
(``redis://10.0.0.5:7000/0?cluster=1``): the client discovers every node from
that one, and follows failovers and slot moves (redis-py's ``RedisCluster``).
The flag is explicit rather than detected (``INFO cluster``) so that building a
client never needs a connection (nothing connects before a process asks), and
so that a URL says what it is.  Without the flag a URL is one server, which a
process checks once at its start (:func:`check_role`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from redis.cluster import RedisCluster, key_slot

_TRUE = ("1", "true", "yes", "on")


def split_cluster_flag(url: str) -> tuple[str, bool]:
    """``url`` without its ``cluster`` query flag, and whether the flag was set."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    flags = [v for k, v in query if k == "cluster"]
    if not flags:
        return url, False
    rest = urlencode([(k, v) for k, v in query if k != "cluster"])
    return urlunsplit(parts._replace(query=rest)), flags[-1].strip().lower() in _TRUE


def is_cluster_url(url: str) -> bool:
    return split_cluster_flag(url)[1]


def is_cluster(r: Any) -> bool:
    """Whether ``r`` (a client) talks to a Redis Cluster."""
    return isinstance(r, RedisCluster)


def connect(url: str, max_connections: int = 64, pool_timeout: float = 5.0, **options: Any) -> Any:
    """A client for ``url``: a ``RedisCluster`` when it carries ``cluster=1``,
    else a ``redis.Redis`` on a blocking pool of at most ``max_connections``
    (a request waits ``pool_timeout`` seconds for a connection, then fails).
    Connects on first use."""
    plain, cluster = split_cluster_flag(url)
    if cluster:
        # One pool per node; a database number other than 0 does not exist on a cluster.
        parts = urlsplit(plain)
        plain = urlunsplit(parts._replace(path=""))
        return RedisCluster.from_url(plain, max_connections=max_connections, **options)
    return redis.Redis(
        connection_pool=redis.BlockingConnectionPool.from_url(
            plain, max_connections=max_connections, timeout=pool_timeout, **options
        )
    )


def check_role(r: Any, url: str, variable: str) -> None:
    """At a process's start: refuse a URL without ``cluster=1`` whose server is a Redis
    Cluster node (every read would otherwise answer ``MOVED``, a 503 each time), saying
    what to add.  A server that cannot be reached yet is left to the usual retries."""
    if is_cluster(r):
        return
    try:
        enabled = r.info("cluster").get("cluster_enabled")
    except (redis.RedisError, OSError):
        return
    if enabled:
        flagged = url + ("&" if urlsplit(url).query else "?") + "cluster=1"
        raise ValueError(
            f"{variable} names a Redis Cluster node but not a cluster: add the flag 'cluster=1' ({flagged})"
        )


def connect_one(url: str, **options: Any) -> Any:
    """An unpooled-style client for a short job (the hub's listener, the rate
    limits): ``RedisCluster`` or ``redis.Redis`` as :func:`connect` decides."""
    plain, cluster = split_cluster_flag(url)
    if cluster:
        parts = urlsplit(plain)
        return RedisCluster.from_url(urlunsplit(parts._replace(path="")), **options)
    return redis.Redis.from_url(plain, **options)


def same_slot(*keys: str | bytes) -> bool:
    """Whether every key hashes to one Redis Cluster slot (a multi-key command's rule)."""
    return len({key_slot(k.encode() if isinstance(k, str) else k) for k in keys}) <= 1


#: What a Redis Cluster answers while a primary fails over (besides connection
#: errors and timeouts): the API turns them into ``503 service_unavailable``.
CLUSTER_ERRORS: tuple[type[Exception], ...] = (
    redis.exceptions.ClusterError,  # CLUSTERDOWN, MASTERDOWN
    redis.exceptions.TryAgainError,  # a multi-key command during a slot's move
    redis.exceptions.RedisClusterException,  # no node answers for a slot, or no node at all
)

#: A server unreachable, or slow past the socket timeout (the edges answer 503 for these).
DOWN: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)

#: Every error that means "Redis is away for now" (one server down, or a cluster failing over).
UNAVAILABLE: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError, *CLUSTER_ERRORS)
