"""Redis key names.  Per-game keys carry the game id in a hash tag
(``g:{<id>}``) so that every key of one game lands in the same Redis Cluster
slot and a game's read model can be written in one MULTI."""

from __future__ import annotations

import zlib


def game(game_id: str) -> str:
    """Hash holding a game's whole read model and its checkpoint (``version``)."""
    return f"g:{{{game_id}}}"


#: Projection shards.  A commit marks its game dirty in its shard's set; one
#: queued job per shard drains the set (``workers.jobs.drain``).  More than one
#: shard lets several workers project side by side.
SHARDS = 4


def shard_of(game_id: str) -> int:
    return zlib.crc32(game_id.encode()) % SHARDS


def dirty(shard: int) -> str:
    """Set of games with commits not yet projected, in one shard."""
    return f"projection:{{{shard}}}:dirty"


def drain_pending(shard: int) -> str:
    """Set while a drain job for the shard is queued and not yet started: one
    queued job is enough (it drains whatever the set holds when it runs)."""
    return f"projection:{{{shard}}}:pending"


#: Sorted sets of game ids, newest first (score: creation time in ms).
GAMES_ALL = "games:all"


def games_by(facet: str, value: str) -> str:
    return f"games:{facet}:{value}"


#: Global-feed cursor of the catch-up sweep.
SWEEP_CURSOR = "sweep:cursor"
