"""The tests' own loopback ports (tests/support/live.py): under pytest-xdist each worker picks
from a share that no other worker of the run has, below the kernel's ephemeral ports, and never
hands out one port twice, so a server that binds its port seconds after the pick still finds it free."""

from __future__ import annotations

import socket

import pytest
from support import live


def _picks(monkeypatch, count: int, index: int, n: int) -> list[int]:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(count))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{index}")
    monkeypatch.setattr(live, "_handed_out", set())
    return [live.free_port() for _ in range(n)]


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_each_worker_picks_from_a_share_of_its_own(monkeypatch, count):
    shares = [set(_picks(monkeypatch, count, index, 40)) for index in range(count)]
    assert all(len(share) == 40 for share in shares)  # no port handed out twice
    every = [port for share in shares for port in share]
    assert len(every) == len(set(every)), shares  # disjoint across the workers
    assert all(port in live._SERVER_PORTS for port in every)
    assert max(every) < 32768  # below the ephemeral range that outgoing connections use


def test_a_port_someone_listens_on_is_never_picked(monkeypatch):
    # Above the servers' ports and below the ephemeral ones: nobody else's.
    monkeypatch.setattr(live, "_SERVER_PORTS", range(32100, 32104))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 32101))
        taken.listen()
        picks = _picks(monkeypatch, 1, 0, 3)
        assert sorted(picks) == [32100, 32102, 32103]
        with pytest.raises(RuntimeError, match="no free loopback port"):
            live.free_port()
