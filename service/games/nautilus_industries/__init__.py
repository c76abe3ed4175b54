"""Nautilus Industries (Lamp Light Games): the pure rules engine.

Modules: ``data`` (components and decisions, with their IDs), ``commands`` (intents),
``setup``, ``rules`` (legal/decide and the automatic steps), ``evolve`` (events ->
state), ``scoring`` and ``views`` (view, redaction, invariants).
"""

from __future__ import annotations

from typing import Any

from service.games.base import Command, Event, State, Viewer
from service.games.nautilus_industries import data, rules, views
from service.games.nautilus_industries.commands import COMMANDS
from service.games.nautilus_industries.evolve import evolve as _evolve
from service.games.nautilus_industries.setup import setup as _setup
from service.games.rng import Rng


class NautilusIndustries:
    name = data.NAME
    version = data.VERSION
    min_players = data.MIN_PLAYERS
    max_players = data.MAX_PLAYERS
    commands: dict[str, type[Command]] = COMMANDS

    def setup(self, players: int, options: dict[str, Any], rng: Rng) -> list[Event]:
        return _setup(players, options, rng)

    def evolve(self, state: State | None, event: Event) -> State:
        return _evolve(state, event)

    def legal(self, state: State, seat: int) -> list[Command]:
        return rules.legal(state, seat)

    def decide(self, state: State, seat: int, command: Command, rng: Rng) -> list[Event]:
        return rules.decide(state, seat, command, rng)

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return views.view(state, viewer)

    def redact_event(self, event: Event, viewer: Viewer) -> Event:
        return views.redact_event(event, viewer)

    def to_act(self, state: State) -> list[int]:
        return rules.to_act(state)

    def result(self, state: State) -> dict[str, Any] | None:
        result = state.get("result")
        return None if result is None else dict(result)

    def check_invariants(self, state: State) -> None:
        views.check_invariants(state)


ENGINE = NautilusIndustries()

__all__ = ["ENGINE", "NautilusIndustries"]
