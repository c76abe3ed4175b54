"""The clocks' index: when each running game's first deadline falls.

One sorted set (:data:`projections.keys.DEADLINES`): member a game id, score the epoch
seconds of the earliest deadline of its seats to act (``service/domain/clocks.py``).  The
board projection writes it in the same atomic write as the game's read model (``runner._apply``),
so it follows the stream like every read model: a game that finishes, or whose seats have
no running clock, leaves it, and ``make rebuild`` writes it again from PostgreSQL.  It is
only a hint of when to look: the timeout itself is decided from the stream
(``GameService.time_out``), so a stale or lost entry can delay a timeout by one projection,
never write a wrong one.

The scheduler (``workers/timeouts.py``) takes the due entries with :func:`claim`, which
pushes each one ``lease`` seconds ahead in the same atomic step, so several workers never
look at one game at once, and a worker that dies mid-way leaves it to another after the lease.
"""

from __future__ import annotations

from typing import Any

import redis

from projections import keys
from service.domain import clocks

# ZRANGEBYSCORE then ZADD XX in one script: the entries due by ARGV[1], at most ARGV[3],
# each moved to ARGV[2] (now + lease) and returned.
_CLAIM = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
    redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
end
return ids
"""


def score(deadline: str) -> float:
    """A deadline as the set's score (epoch seconds)."""
    return clocks.to_us(deadline) / 1_000_000


def index(pipe: Any, game_id: str, deadline: str | None) -> None:
    """Queue on ``pipe`` (inside the board's atomic write) the game's entry: its earliest deadline,
    or none (finished, or no seat's clock runs)."""
    if deadline is None:
        pipe.zrem(keys.DEADLINES, game_id)
    else:
        pipe.zadd(keys.DEADLINES, {game_id: score(deadline)})


#: On a Redis Cluster the index is written beside the game's guarded write, not inside it
#: (``runner.cluster_plan``): two writers of one game could then reach it in either order.
#: Each entry therefore carries the version of the write that set it
#: (:data:`keys.DEADLINE_VERSIONS`, in the index's slot), and an older write never replaces
#: a newer one.  KEYS: the index, the versions; ARGV: game id, version, score ('' : none).
VERSIONED = """
local v = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if tonumber(ARGV[2]) < v then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[3] == '' then
    redis.call('ZREM', KEYS[1], ARGV[1])
else
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""


def versioned(game_id: str, version: int | str, deadline: str | None) -> tuple[Any, ...]:
    """The command that sets ``game_id``'s entry as of ``version`` (see :data:`VERSIONED`)."""
    at = "" if deadline is None else repr(score(deadline))
    return ("EVAL", VERSIONED, 2, keys.DEADLINES, keys.DEADLINE_VERSIONS, game_id, str(version), at)


def claim(r: redis.Redis, now: float, lease: float, limit: int = 100) -> list[str]:
    """The games whose earliest deadline is at or before ``now`` (epoch seconds), at most
    ``limit``, each pushed ``lease`` seconds ahead so that nobody else takes it meanwhile."""
    ids = r.eval(_CLAIM, 1, keys.DEADLINES, repr(now), repr(now + lease), str(limit))
    return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]


def forget(r: redis.Redis, game_id: str) -> None:
    """Drop a game's entry (a game the event store does not know)."""
    r.zrem(keys.DEADLINES, game_id)
