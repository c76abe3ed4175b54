"""Redis key names.  Per-game keys carry the game id in a hash tag
(``g:{<id>}``) so that every key of one game lands in the same Redis Cluster
slot and a game's read model can be written in one atomic script
(``projections/runner.py``)."""

from __future__ import annotations


def game(game_id: str) -> str:
    """Hash holding a game's whole read model and its checkpoint (``version``)."""
    return f"g:{{{game_id}}}"


#: Sorted sets of game ids, newest first (score: creation time in ms).
GAMES_ALL = "games:all"


def games_by(facet: str, value: str) -> str:
    return f"games:{facet}:{value}"


#: The facets a game list filters on, in the order a combination's key names them.
FACETS = ("game", "status", "player", "rated")


def games_list(facets: dict[str, str]) -> str:
    """The sorted set of the games matching every facet: one set per combination,
    written by the projection, so a list with several filters is one key (no
    intersection, which a Redis Cluster refuses across slots)."""
    if not facets:
        return GAMES_ALL
    if len(facets) == 1:
        ((facet, value),) = facets.items()
        return games_by(facet, value)
    return "games:c:" + "|".join(f"{f}={facets[f]}" for f in FACETS if f in facets)


#: Sorted set of running games by their earliest clock deadline (``projections/deadlines.py``);
#: under ``games:`` so that a rebuild drops it with the game lists and writes it again.
DEADLINES = "games:deadlines"
#: On a Redis Cluster, the version of the write that set each game's entry of :data:`DEADLINES`
#: (``projections/deadlines.py``, ``versioned``); tagged with that key's name, so in its slot.
DEADLINE_VERSIONS = "{games:deadlines}:versions"

#: Global-feed cursor of the catch-up sweep.
SWEEP_CURSOR = "sweep:cursor"
