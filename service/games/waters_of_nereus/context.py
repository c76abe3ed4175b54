"""Emitting events in ``decide``: the context that collects them, and the random draws
(bag, science deck, board placement) that every draw writes into its event."""

from __future__ import annotations

from typing import Any

from service.games.base import Event, State, clone_state
from service.games.rng import Rng
from service.games.waters_of_nereus import data
from service.games.waters_of_nereus.evolve import evolve

COLOURS = data.COLOURS


class Ctx:
    """Collects events.  Reading ``s`` after an ``emit`` applies the events so far to a private
    copy of the state (cloned lazily: most commands emit and never look again)."""

    __slots__ = ("_applied", "_own", "_state", "events", "rng")

    def __init__(self, state: State, rng: Rng):
        self._state = state
        self._own = False
        self._applied = 0
        self.rng = rng
        self.events: list[Event] = []

    @property
    def s(self) -> State:
        if self._applied < len(self.events):
            if not self._own:
                self._state = clone_state(self._state)
                self._own = True
            for ev in self.events[self._applied :]:
                evolve(self._state, ev)
            self._applied = len(self.events)
        return self._state

    def emit(self, type_: str, **data_: Any) -> None:
        ev = Event(type_, data_)
        self.events.append(ev)
        if self._own:  # once copied, keep the copy current
            evolve(self._state, ev)
            self._applied += 1


def draw_treasure(ctx: Ctx, seat: int) -> None:
    """WON-I04: a draw from the bag, weighted by count; nothing if the bag is empty."""
    bag = ctx.s["bag"]
    total = sum(bag.values())
    if total == 0:
        return
    x = ctx.rng.randbelow(total)
    for t in COLOURS:
        x -= bag[t]
        if x < 0:
            ctx.emit("TreasureDrawn", seat=seat, treasure=t)
            return


def draw_science(ctx: Ctx, seat: int) -> None:
    """WON-129, WON-A12: top card of the deck; an empty deck draws nothing (no reshuffle)."""
    deck = ctx.s["science_deck"]
    if deck:
        ctx.emit("ScienceCardDrawn", seat=seat, card=deck[-1])


def gain_science(ctx: Ctx, seat: int, n: int) -> None:
    """WON-D08: the track stops at 10."""
    now = ctx.s["seats"][seat]["science"]
    delta = min(n, data.SCIENCE_MAX - now)
    if delta > 0:
        ctx.emit("SciencePowerChanged", seat=seat, delta=delta)


def place_on_board(ctx: Ctx, cells: list[int]) -> None:
    """WON-015, WON-031, WON-A20: one random treasure per space, never on a ship, never a 4th."""
    s = ctx.s
    bag = dict(s["bag"])
    occupied = set(c_ for c_ in s["ships"] if c_ is not None)
    if s["neutral_ship"] is not None:
        occupied.add(s["neutral_ship"])
    placed = []
    for cell in cells:
        if cell in occupied or len(s["board"][cell]) >= data.MAX_ON_SPACE:
            continue
        total = sum(bag.values())
        if total == 0:
            break
        x = ctx.rng.randbelow(total)
        for t in COLOURS:
            x -= bag[t]
            if x < 0:
                bag[t] -= 1
                placed.append([cell, t])
                break
    ctx.emit("TreasuresPlaced", cells=placed)
