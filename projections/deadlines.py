"""The clocks' index: when each running game's first deadline falls.

One sorted set (:data:`projections.keys.DEADLINES`): member a game id, score the epoch
seconds of the earliest deadline of its seats to act (``service/core/clocks.py``).  The
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
from service.core import clocks

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


def claim(r: redis.Redis, now: float, lease: float, limit: int = 100) -> list[str]:
    """The games whose earliest deadline is at or before ``now`` (epoch seconds), at most
    ``limit``, each pushed ``lease`` seconds ahead so that nobody else takes it meanwhile."""
    ids = r.eval(_CLAIM, 1, keys.DEADLINES, repr(now), repr(now + lease), str(limit))
    return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]


def forget(r: redis.Redis, game_id: str) -> None:
    """Drop a game's entry (a game the event store does not know)."""
    r.zrem(keys.DEADLINES, game_id)
