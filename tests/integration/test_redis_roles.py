"""A read side's URL says what its server is (``service/redis_roles.py``): a Redis Cluster
node named without ``cluster=1`` answered every read with ``MOVED`` (a
``503 redis_unavailable`` each time, for as long as the process ran); the process now
refuses to start, saying what to add.  On a node of its own, started with cluster mode."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from support.cluster_servers import Node, binaries, free_ports, wait_until

from service.bootstrap import bootstrap


@pytest.fixture(scope="module")
def cluster_node():
    server, _ = binaries()
    node = Node(Path(tempfile.mkdtemp(prefix="qd-node-")), free_ports(1)[0], cluster=True)
    node.start(server)
    try:
        wait_until(node.ping, 15, f"redis-server on port {node.port}")
        yield node
    finally:
        node.kill()


def test_a_cluster_node_named_without_the_flag_stops_the_start_saying_what_to_add(settings, cluster_node):
    url = f"redis://127.0.0.1:{cluster_node.port}/0"
    with pytest.raises(ValueError, match=r"QD_READ_REDIS_URL .*add the flag 'cluster=1' \(.*/0\?cluster=1\)"):
        bootstrap(settings.with_(read_redis_url=url))


def test_a_plain_server_and_an_unreachable_one_start_as_before(settings):
    for url in (settings.redis_url, "redis://127.0.0.1:1/0"):
        components = bootstrap(settings.with_(read_redis_url=url))
        components.store.pool.close()
