"""The opening events (rulebook "Setup"; NIN-010 to NIN-018).

The state these events build (``evolve``) gives each player 3 subs, capacity 1 and $0
(NIN-010), lays out one zone tile per player in a line (NIN-012) and leaves all 30
certificates for sale (NIN-018); the events below carry the random and derived parts.
"""

from __future__ import annotations

from typing import Any

from service.games.base import Event
from service.games.nautilus_industries import data as D
from service.games.nautilus_industries import refusals as R
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
    """The opening events; refuses a player count outside NIN-001 and any option."""
    if type(players) is not int or not D.MIN_PLAYERS <= players <= D.MAX_PLAYERS:
        raise R.invalid_player_count(players)
    if options:
        raise R.invalid_options()
    events = [
        Event("GameStarted", {"players": players, "options": {}}),
        Event("FirstPlayerChosen", {"seat": rng.randbelow(players)}),  # NIN-011
        # NIN-013 (stock markers on space 0), NIN-017 (commodity markers, chosen not drawn).
        # NIN-Q01 (our decision): all 10 marker gems are set aside BEFORE the zone tiles are
        # drawn.  The rulebook draws first and takes the commodity markers afterwards, which
        # could (very rarely) find no gem of a colour left in the bag; setting them aside
        # first always works, keeps the bag at 100 - 10 - 5N after setup and changes nothing else.
        Event("MarkersSetAside", {"gems": dict.fromkeys(D.COLOURS, D.MARKERS_PER_COLOUR)}),
    ]
    first = events[1].data["seat"]
    pool = [c for c in D.COLOURS for _ in range(D.GEMS_PER_COLOUR - D.MARKERS_PER_COLOUR)]
    counts = dict.fromkeys(D.COLOURS, 0)
    for tile in range(players):  # NIN-014: position order (tile id = setup position, NIN-Q04)
        drawn = rng.draw(pool, D.GEMS_PER_TILE_DRAW)
        for c in drawn:
            counts[c] += 1
        events.append(Event("GemsDrawn", {"tile": tile, "gems": drawn}))
    events.append(Event("CommodityValuesSet", {"counts": counts, "values": commodity_values(counts)}))
    events.append(Event("RoundStarted", {"round": 1, "first": first}))
    return events
