"""docs/SCALING.md, "Redis by role": on a Redis Cluster the clocks' index is written
beside a game's guarded write, so two writers of one game may reach it in either
order; each entry carries the version that set it (``deadlines.versioned``)."""

from __future__ import annotations

import uuid

import pytest
import redis

from projections import deadlines, keys


@pytest.fixture
def r(settings):
    client = redis.Redis.from_url(settings.redis_url)
    yield client
    client.close()


def test_an_older_write_never_replaces_a_newer_entry(r):
    gid = str(uuid.uuid4())  # its own entry: the index is shared with the file's other games
    newer, older = "2026-12-04T10:05:00Z", "2026-12-04T10:01:00Z"
    assert r.execute_command(*deadlines.versioned(gid, 6, newer)) == 1
    assert r.execute_command(*deadlines.versioned(gid, 5, older)) == 0
    assert r.zscore(keys.DEADLINES, gid) == pytest.approx(deadlines.score(newer))
    # The same version again (a retried write) is the same entry; a finish removes it for good.
    assert r.execute_command(*deadlines.versioned(gid, 6, newer)) == 1
    assert r.execute_command(*deadlines.versioned(gid, 9, None)) == 1
    assert r.execute_command(*deadlines.versioned(gid, 8, older)) == 0
    assert r.zscore(keys.DEADLINES, gid) is None
    r.hdel(keys.DEADLINE_VERSIONS, gid)
