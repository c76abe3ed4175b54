"""The Waters of Nereus engine object: setup, and the interface glue."""

from __future__ import annotations

from typing import Any

from service.games.base import Command, Event, RuleViolation, State, Viewer, clone_state
from service.games.rng import Rng
from service.games.waters_of_nereus import data, invariants, legal, rules, state, views
from service.games.waters_of_nereus.commands import COMMANDS


class WatersOfNereus:
    name = data.NAME
    version = data.VERSION
    min_players = data.MIN_PLAYERS
    max_players = data.MAX_PLAYERS
    commands: dict[str, type[Command]] = COMMANDS

    def setup(self, players: int, options: dict[str, Any], rng: Rng) -> list[Event]:
        if not isinstance(players, int) or isinstance(players, bool) or not 2 <= players <= 4:
            raise RuleViolation("invalid_player_count", "Waters of Nereus is for 2 to 4 players (WON-001).")
        if not isinstance(options, dict) or set(options) - {"neutral"}:
            raise RuleViolation("invalid_options", "The only option is 'neutral' (WON-001).")
        neutral = options.get("neutral", False)
        if not isinstance(neutral, bool):
            raise RuleViolation("invalid_options", "'neutral' must be true or false (WON-001).")
        if neutral and players != 2:
            raise RuleViolation("invalid_options", "The neutral player is a 2-player variant only (WON-001).")
        size = data.BOARD_SIZE[players]  # WON-010
        events = [
            Event(
                "GameStarted",
                {"players": players, "neutral": neutral, "size": size, "spaces": data.SPACES_PER_ROW[players]},
            ),
            Event("StartingPlayerDrawn", {"seat": rng.randbelow(players)}),  # WON-019, WON-Q01
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
        if neutral:  # WON-130, WON-131, WON-A17
            events.append(Event("NeutralDeckShuffled", {"deck": rng.shuffled(data.CREWS)}))
            events.append(Event("NeutralShipPlaced", {"cell": (size // 2) * size + size // 2}))
        return events

    def evolve(self, st: State | None, event: Event) -> State:
        return state.evolve(st, event)

    def legal(self, st: State, seat: int) -> list[Command]:
        return legal.legal(st, seat)

    def decide(self, st: State, seat: int, command: Command, rng: Rng) -> list[Event]:
        return rules.decide(st, seat, command, rng)

    def view(self, st: State, viewer: Viewer) -> dict[str, Any]:
        return views.view(st, viewer)

    def redact_event(self, event: Event, viewer: Viewer) -> Event:
        return views.redact_event(event, viewer)

    def to_act(self, st: State) -> list[int]:
        return state.to_act(st)

    def result(self, st: State) -> dict[str, Any] | None:
        result = st["result"]
        return None if result is None else clone_state(result)

    def check_invariants(self, st: State) -> None:
        invariants.check(st)
