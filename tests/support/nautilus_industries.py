"""Helpers for the Nautilus Industries tests (unit and scenario): a fixed-seed game, commands
applied straight to the engine, and fixtures that rig a position.

The fixtures write into the state dict directly and take every gem they place from the bag
(or put it back there), so the gem-conservation invariant (NIN-002) still holds afterwards.
Not used by the engine itself.
"""

from __future__ import annotations

from typing import Any

from service.games.base import Command, Event, RuleViolation, fold
from service.games.nautilus_industries import ENGINE
from service.games.nautilus_industries import data as D
from service.games.rng import Rng

E = ENGINE
SEED = bytes(range(32))


def new_state(n: int = 2, seed: bytes = SEED) -> dict[str, Any]:
    """A fresh game after setup (action phase of round 1)."""
    return fold(E, E.setup(n, {}, Rng(seed)))


def act(state: dict[str, Any], seat: int, command: Command, domain: int = 1) -> tuple[dict, list[Event]]:
    """Decide and fold one command; returns the new state and the events."""
    events = E.decide(state, seat, command, Rng(SEED, domain=domain))
    for event in events:
        state = E.evolve(state, event)
    return state, events


def refused(state: dict[str, Any], seat: int, command: Command) -> str:
    """The RuleViolation code ``command`` is refused with (fails if it is accepted)."""
    try:
        E.decide(state, seat, command, Rng(SEED))
    except RuleViolation as exc:
        return exc.code
    raise AssertionError(f"{command!r} was accepted")


def clear_tiles(state: dict[str, Any]) -> dict[str, Any]:
    """Put every gem of every tile back in the bag."""
    for tile in state["tiles"]:
        for c in D.COLOURS:
            state["bag"][c] += tile["gems"][c]
            tile["gems"][c] = 0
    return state


def set_tile(state: dict[str, Any], tile: int, **gems: int) -> dict[str, Any]:
    """Set a tile's gems (taken from / returned to the bag)."""
    for c, k in gems.items():
        state["bag"][c] += state["tiles"][tile]["gems"][c] - k
        state["tiles"][tile]["gems"][c] = k
    return state


def give(state: dict[str, Any], seat: int, **gems: int) -> dict[str, Any]:
    """Set a player's held gems (taken from / returned to the bag)."""
    for c, k in gems.items():
        state["bag"][c] += state["players"][seat]["gems"][c] - k
        state["players"][seat]["gems"][c] = k
    return state


def first_seat(state: dict[str, Any]) -> int:
    return state["first"]


def other_seat(state: dict[str, Any], seat: int) -> int:
    return (seat + 1) % state["n"]


def to_sell_step(state: dict[str, Any], seller: int, position: int = 0) -> dict[str, Any]:
    """Put the game in the market phase at ``position``, with ``seller`` selling now and the
    players before them in turn order done."""
    n = state["n"]
    index = (seller - state["first"]) % n
    state["phase"] = "market"
    state["actions_done"] = D.ACTIONS_PER_PLAYER * n
    state["market"] = {
        "position": position,
        "next_index": index + 1,
        "seller": seller,
        "sold": dict.fromkeys(D.COLOURS, 0),
    }
    return state


def finish_actions(state: dict[str, Any], domain: int = 100) -> tuple[dict, list[Event]]:
    """Play out the rest of this round's action phase with warehouse upgrades (or the first
    legal command when that is impossible); returns the state and all events (the market
    phase runs on by itself as far as it can)."""
    events: list[Event] = []
    start = state["round"]
    while state["phase"] == "action" and state["round"] == start:
        seat = E.to_act(state)[0]
        legal = E.legal(state, seat)
        cmd = next((c for c in legal if c.type == "upgrade_warehouse"), legal[0])
        state, new = act(state, seat, cmd, domain)
        events += new
        domain += 1
    return state, events


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]
