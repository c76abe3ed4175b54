"""The tests' own Redis databases (tests/support/databases.py): under pytest-xdist, each worker of
a run gets a share of 1-15 that no other worker of that run has (a session flushes its databases,
and the backup test takes empty ones for its copies)."""

from __future__ import annotations

import pytest
from support.databases import redis_dbs


def _shares(monkeypatch, count: int, pinned: str | None, run: str = "run-a") -> list[list[int]]:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(count))
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", run)
    if pinned is None:
        monkeypatch.delenv("QD_TEST_REDIS_DB", raising=False)
    else:
        monkeypatch.setenv("QD_TEST_REDIS_DB", pinned)
    out = []
    for index in range(count):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{index}")
        out.append(redis_dbs())
    return out


@pytest.mark.parametrize("pinned", [None, "1", "7", "15"])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_each_worker_has_a_share_of_its_own(monkeypatch, count, pinned):
    shares = _shares(monkeypatch, count, pinned)
    every = [db for share in shares for db in share]
    assert len(every) == len(set(every)), shares  # disjoint
    assert all(1 <= db <= 15 for db in every)  # never 0, which `make run` uses
    assert all(len(share) >= 4 for share in shares)  # a session's own and the backup test's three
    if pinned is not None:
        assert shares[0][0] == int(pinned)


def test_the_workers_of_one_run_agree_and_runs_differ(monkeypatch):
    assert _shares(monkeypatch, 3, None, "run-a") == _shares(monkeypatch, 3, None, "run-a")
    starts = {_shares(monkeypatch, 3, None, f"run-{i}")[0][0] for i in range(20)}
    assert len(starts) > 1


def test_outside_xdist_the_pinned_database_comes_first(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv("QD_TEST_REDIS_DB", "9")
    dbs = redis_dbs()
    assert dbs[0] == 9 and sorted(dbs) == list(range(1, 16))


def test_more_workers_than_databases_is_refused(monkeypatch):
    with pytest.raises(RuntimeError, match="workers"):
        _shares(monkeypatch, 16, None)
