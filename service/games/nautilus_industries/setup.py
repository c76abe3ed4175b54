"""Setup (NIN-010..018)."""

from __future__ import annotations

from typing import Any

from service.games.base import Event, RuleViolation
from service.games.nautilus_industries import data as D
from service.games.rng import Rng


def commodity_values(counts: dict[str, int]) -> dict[str, int]:
    """Starting commodity values by scarcity (NIN-015, NIN-016): least common colour on 6,
    ... most common on 2; tied colours all take the highest value any of them qualifies for."""
    ordered = sorted(D.COLOURS, key=lambda c: counts[c])
    values: dict[str, int] = {}
    for c in ordered:
        # the tie group's least rank = the first colour in ``ordered`` with this count
        first = next(i for i, o in enumerate(ordered) if counts[o] == counts[c])
        values[c] = D.SETUP_VALUES[first]
    return {c: values[c] for c in D.COLOURS}


def setup(players: int, options: dict[str, Any] | None, rng: Rng) -> list[Event]:
    if type(players) is not int or not D.MIN_PLAYERS <= players <= D.MAX_PLAYERS:
        raise RuleViolation(
            "invalid_player_count", f"Nautilus Industries is for 2–6 players, not {players!r} (NIN-001)."
        )
    if options:
        raise RuleViolation("invalid_options", "Nautilus Industries has no options.")
    events = [
        Event("GameStarted", {"players": players, "options": {}}),
        Event("FirstPlayerChosen", {"seat": rng.randbelow(players)}),  # NIN-011
        # NIN-013, NIN-017, NIN-Q01: the 10 marker gems leave the bag before the draws.
        Event("MarkersSetAside", {"gems": dict.fromkeys(D.COLOURS, D.MARKERS_PER_COLOUR)}),
    ]
    first = events[1].data["seat"]
    pool = [c for c in D.COLOURS for _ in range(D.GEMS_PER_COLOUR - D.MARKERS_PER_COLOUR)]
    counts = dict.fromkeys(D.COLOURS, 0)
    for tile in range(players):  # NIN-014: position order (tile id = setup position)
        drawn = rng.draw(pool, D.GEMS_PER_TILE_DRAW)
        for c in drawn:
            counts[c] += 1
        events.append(Event("GemsDrawn", {"tile": tile, "gems": drawn}))
    events.append(Event("CommodityValuesSet", {"counts": counts, "values": commodity_values(counts)}))
    events.append(Event("RoundStarted", {"round": 1, "first": first}))
    return events
