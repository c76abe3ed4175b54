"""``setup``: the opening events of a Nauticus game (the opening state and the round-1 layout)."""

from __future__ import annotations

from typing import Any

from service.games.base import Event
from service.games.nauticus.data import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    ROUNDS,
    SEAT_EXTRA_TALER,
    SEAT_EXTRA_WORKERS,
    STACKS,
    START_SEAT,
    START_TALER,
    START_VP,
    START_WORKERS,
)
from service.games.nauticus.evolve import evolve
from service.games.nauticus.refusals import refuse
from service.games.nauticus.rules import layout_event
from service.games.rng import Rng


def setup(players: int, options: dict[str, Any], rng: Rng) -> list[Event]:
    """``GameStarted`` (the opening state) and the round-1 ``ActionTilesLaidOut`` (the one random draw).

    NAU-001: MIN_PLAYERS to MAX_PLAYERS players; NAU-Q08: no options.  NAU-010: the turntable's anchor points
    at space 0; NAU-012: 10 VP; NAU-013: 15 Taler and 4 workers each; NAU-014, NAU-015, NAU-016: more for later
    seats; NAU-017: seat 0 starts; NAU-018: the tiles are shuffled and laid out from space 0.
    """
    if options:
        raise refuse("invalid_options")
    if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise refuse("invalid_player_count", low=MIN_PLAYERS, high=MAX_PLAYERS)
    seats = [
        {
            "taler": START_TALER + SEAT_EXTRA_TALER[players][i],
            "workers": START_WORKERS + SEAT_EXTRA_WORKERS[players][i],
            "vp": START_VP,
        }
        for i in range(players)
    ]
    first = Event(
        "GameStarted",
        {
            "players": players,
            "rounds": ROUNDS[players],
            "start_player": START_SEAT,
            "turntable_anchor": 0,  # NAU-010
            "seats": seats,
            "stacks": dict(STACKS),
        },
    )
    opening = evolve(None, first)
    return [first, layout_event(opening, rng)]
