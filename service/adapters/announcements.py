"""The live hub's connection to the projection's announcements
(``projections/publish.py``; the hub is ``service/http/live/hub.py``), and
the bot worker's to its house bots' account channels (``workers/bots.py``).

:class:`PubSub` is one pub/sub connection and the reads that go with it: on
one Redis server it uses ``SUBSCRIBE``; on a Redis Cluster, ``SSUBSCRIBE``
(sharded pub/sub: a channel lives on the node of its hash tag's slot, so an
announcement reaches only the node of its game and the processes that asked
for that game; one connection per node that holds a subscribed channel).  The
channel names are the same.  :meth:`PubSub.versions` reads many games'
versions in one pipelined round trip: the hub's safety re-read, and its read
of a game whose subscription Redis just confirmed.

:class:`PubSubOpener` is what the composition root hands the hub
(``service.bootstrap.announcements``): each call opens a new connection, at
the hub's start and after a failover (the bot worker: at each resync).  Every Redis or socket error of either
is raised as :class:`PubSubLost`, on which the hub reconnects.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import redis

from service import redis_roles


class PubSubLost(Exception):
    """The pub/sub connection failed (Redis away, a failover); ``reason``: the
    error's type.  Open a new one."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: What a lost connection raises (a socket error is not always wrapped by redis-py).
_LOST = (redis.RedisError, OSError)


class PubSub:
    """One pub/sub connection; see the module's docstring.  Only its opener's
    listener thread uses it (the hub's, or the bot worker's): it is not shared
    between threads."""

    def __init__(self, client: Any, owns_client: bool) -> None:
        """``client``: a Redis or RedisCluster client; ``owns_client``: closed with
        this connection (else kept by its :class:`PubSubOpener`)."""
        self.client = client
        self.owns_client = owns_client
        self.sharded = redis_roles.is_cluster(client)
        self.pubsub = client.pubsub()
        self.channels = 0

    def subscribe(self, channels: list[str]) -> None:
        try:
            (self.pubsub.ssubscribe if self.sharded else self.pubsub.subscribe)(*channels)
        except _LOST as exc:
            raise PubSubLost(type(exc).__name__) from exc
        self.channels += len(channels)

    def unsubscribe(self, channels: list[str]) -> None:
        try:
            (self.pubsub.sunsubscribe if self.sharded else self.pubsub.unsubscribe)(*channels)
        except _LOST as exc:
            raise PubSubLost(type(exc).__name__) from exc
        self.channels -= len(channels)

    def get_message(self, timeout: float, wake: threading.Event) -> dict[str, Any] | None:
        """The next message or confirmation (redis-py's dict: ``type``, ``channel``,
        ``data``), waiting ``timeout`` seconds at most; None if none came."""
        if self.channels <= 0:
            # Nothing subscribed, so nothing to read: sleep until a channel is wanted.
            wake.wait(timeout)
            return None
        try:
            if self.sharded:
                return self.pubsub.get_sharded_message(timeout=timeout)
            return self.pubsub.get_message(timeout=timeout)
        except _LOST as exc:
            raise PubSubLost(type(exc).__name__) from exc

    def check_health(self) -> None:
        if not self.sharded and self.channels > 0:
            try:
                self.pubsub.check_health()
            except _LOST as exc:
                raise PubSubLost(type(exc).__name__) from exc

    def versions(self, hashes: list[str]) -> list[bytes | None]:
        """The ``version`` field of each of ``hashes`` (games' read models), in one
        pipelined round trip; None where there is none."""
        try:
            with self.client.pipeline(transaction=False) as pipe:
                for key in hashes:
                    pipe.hget(key, "version")
                return pipe.execute()
        except _LOST as exc:
            raise PubSubLost(type(exc).__name__) from exc

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.pubsub.close()
        if self.owns_client:
            with contextlib.suppress(Exception):
                self.client.close()


class PubSubOpener:
    """Opens the hub's connections: ``opener(name)`` is a new :class:`PubSub`
    named ``name`` in Redis (``CLIENT LIST``).  ``connect(name)`` makes a client
    (``service.bootstrap.announcements``).  A cluster client is kept: it knows
    every node by now, and the node of the URL may be the one that is down.  A
    single server's is made anew for each connection."""

    def __init__(self, connect: Callable[[str], Any]) -> None:
        self.connect = connect
        self._kept: Any = None

    def __call__(self, name: str) -> PubSub:
        try:
            client = self._kept if self._kept is not None else self.connect(name)
            cluster = redis_roles.is_cluster(client)
            if cluster:
                self._kept = client
            return PubSub(client, owns_client=not cluster)
        except _LOST as exc:
            raise PubSubLost(type(exc).__name__) from exc
