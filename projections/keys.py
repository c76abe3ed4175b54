"""Redis key names.  Per-game keys carry the game id in a hash tag
(``g:{<id>}``) so that every key of one game lands in the same Redis Cluster
slot and a game's read model can be written in one MULTI."""

from __future__ import annotations


def game(game_id: str) -> str:
    """Hash holding a game's whole read model and its checkpoint (``version``)."""
    return f"g:{{{game_id}}}"


#: Sorted sets of game ids, newest first (score: creation time in ms).
GAMES_ALL = "games:all"


def games_by(facet: str, value: str) -> str:
    return f"games:{facet}:{value}"


#: Sorted set of running games by their earliest clock deadline (``projections/deadlines.py``);
#: under ``games:`` so that a rebuild drops it with the game lists and writes it again.
DEADLINES = "games:deadlines"

#: Global-feed cursor of the catch-up sweep.
SWEEP_CURSOR = "sweep:cursor"
