"""Redis key names.  Per-game keys carry the game id in a hash tag
(``g:{<id>}``) so that every key of one game lands in the same Redis Cluster
slot and a game's read model can be written in one MULTI."""

from __future__ import annotations

import zlib


def game(game_id: str) -> str:
    """Hash holding a game's whole read model and its checkpoint (``version``)."""
    return f"g:{{{game_id}}}"


#: Projection shards (``Settings.projection_shards``).  A commit marks its
#: game dirty in its shard's set; one drain job per shard projects the set
#: (``workers.jobs.drain``), so several workers can project side by side.


def shard_of(game_id: str, shards: int) -> int:
    return zlib.crc32(game_id.encode()) % shards


def dirty(shard: int) -> str:
    """Set of games with commits not yet projected, in one shard."""
    return f"projection:{{{shard}}}:dirty"


def drain_pending(shard: int) -> str:
    """The shard's drain job: ``queued`` while one is queued and not started
    (it will drain whatever the set holds when it runs), ``lingering`` while
    one is waiting for new commits (each commit wakes it); absent otherwise."""
    return f"projection:{{{shard}}}:pending"


def wake(shard: int) -> str:
    """List a commit pushes to, to wake the shard's lingering drain job."""
    return f"projection:{{{shard}}}:wake"


#: Sorted sets of game ids, newest first (score: creation time in ms).
GAMES_ALL = "games:all"


def games_by(facet: str, value: str) -> str:
    return f"games:{facet}:{value}"


#: Global-feed cursor of the catch-up sweep.
SWEEP_CURSOR = "sweep:cursor"
