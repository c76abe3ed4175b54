"""Nauticus (Kramer & Kiesling, Kosmos 2013): the pure rules engine.  ``ENGINE`` is what the registry loads."""

from __future__ import annotations

from typing import Any

from service.games.base import Command, Event, RuleViolation, State, Viewer
from service.games.nauticus import rules, views
from service.games.nauticus import state as state_mod
from service.games.nauticus.commands import COMMANDS
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
from service.games.rng import Rng

__all__ = ["ENGINE", "NauticusEngine"]


class NauticusEngine:
    name = "nauticus"
    version = "1.0.0"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    commands: dict[str, type[Command]] = COMMANDS

    def setup(self, players: int, options: dict[str, Any], rng: Rng) -> list[Event]:
        """NAU-010..018: the opening state and the round-1 layout of the action tiles."""
        if options:
            raise RuleViolation("invalid_options", "Nauticus has no options.")
        if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RuleViolation("invalid_player_count", "NAU-001: Nauticus is for 2 to 4 players.")
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
        opening = state_mod.evolve(None, first)
        return [first, rules.layout_event(opening, rng)]

    def evolve(self, state: State | None, event: Event) -> State:
        return state_mod.evolve(state, event)

    def legal(self, state: State, seat: int) -> list[Command]:
        return rules.legal(state, seat)

    def decide(self, state: State, seat: int, command: Command, rng: Rng) -> list[Event]:
        return rules.decide(state, seat, command, rng)

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """NAU-005: the same open state for every seat, spectators (None) and the organiser (ADMIN)."""
        return views.view(state, viewer)

    def redact_event(self, event: Event, viewer: Viewer) -> Event:
        """Clarifications §4: nothing is hidden (the layout draw is public once laid out)."""
        return event

    def to_act(self, state: State) -> list[int]:
        return rules.to_act(state)

    def result(self, state: State) -> dict[str, Any] | None:
        return state["result"]

    def check_invariants(self, state: State) -> None:
        views.check_invariants(state)


ENGINE = NauticusEngine()
