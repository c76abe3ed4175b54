"""The opening events of a game of Waters of Nereus (``setup``): rulebook, Setup steps 1-13."""

from __future__ import annotations

from typing import Any

from service.games.base import Event
from service.games.rng import Rng
from service.games.waters_of_nereus import data
from service.games.waters_of_nereus.refusals import refuse

#: The only option: the two-player neutral-player variant (WON-001, WON-Q12, WON-I07).
OPTIONS = {"neutral"}


def setup(players: int, options: dict[str, Any], rng: Rng) -> list[Event]:
    """Validate the player count and options, then draw the opening: starting player, discovery
    stack, science deck and hands, and (variant) the neutral deck and ship.  The ships' corners
    and the setup fill of the board follow the corner choices (WON-012, WON-015)."""
    if not isinstance(players, int) or isinstance(players, bool) or not data.MIN_PLAYERS <= players <= data.MAX_PLAYERS:
        raise refuse("player_count")
    if not isinstance(options, dict) or set(options) - OPTIONS:
        raise refuse("unknown_option")
    # WON-Q12: the variant is off unless asked for (the rulebook only offers it: "try this variant").
    neutral = options.get("neutral", False)
    if not isinstance(neutral, bool):
        raise refuse("neutral_not_bool")
    if neutral and players != 2:
        raise refuse("neutral_needs_two")
    size = data.BOARD_SIZE[players]  # WON-002, WON-010
    events = [
        Event(
            "GameStarted",
            {"players": players, "neutral": neutral, "size": size, "spaces": data.SPACES_PER_ROW[players]},
        ),
        # WON-019, WON-I06, WON-Q01: the starting player is a seeded draw recorded in an event.
        Event("StartingPlayerDrawn", {"seat": rng.randbelow(players)}),
    ]
    side = data.DISCOVERY_SIDE[players]
    cards = rng.shuffled(sorted(k for k in data.DISCOVERY_CARDS if k.startswith(side)))  # WON-016
    events.append(
        Event(
            "DiscoveryStackShuffled",
            {"stack": cards[data.DISCOVERY_REMOVED :], "removed": cards[: data.DISCOVERY_REMOVED]},
        )
    )
    deck = rng.shuffled(sorted(data.SCIENCE_CARDS))  # WON-018
    events.append(Event("ScienceDeckShuffled", {"deck": deck}))
    for seat in range(players):
        hand = deck[len(deck) - data.SCIENCE_DEAL :]
        deck = deck[: len(deck) - data.SCIENCE_DEAL]
        events.append(Event("ScienceCardsDealt", {"seat": seat, "cards": hand[::-1]}))
    if neutral:  # WON-130, WON-131; WON-A17: the neutral ship is placed before the setup fill
        events.append(Event("NeutralDeckShuffled", {"deck": rng.shuffled(data.CREWS)}))
        events.append(Event("NeutralShipPlaced", {"cell": (size // 2) * size + size // 2}))
    return events
