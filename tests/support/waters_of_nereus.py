"""Waters of Nereus test helpers: build positions through setup + decide, then adjust them for a
scenario.  Imported by the unit, scenario and property tests as ``support.waters_of_nereus``."""

from __future__ import annotations

import random

from service.games.base import Command, Event, State, clone_state, fold
from service.games.rng import Rng
from service.games.waters_of_nereus import ENGINE, data
from service.games.waters_of_nereus import commands as c

SEED = bytes(range(32))


def rng(k: int = 0) -> Rng:
    return Rng(SEED, domain=k)


def new_game(players: int = 4, neutral: bool = False, seed: int = 0) -> State:
    """The opening state (corner choice pending)."""
    options = {"neutral": True} if neutral else {}
    return fold(ENGINE, ENGINE.setup(players, options, Rng(SEED, domain=seed)))


def act(state: State, seat: int, cmd: Command, k: int = 1) -> list[Event]:
    """decide + evolve in place; returns the events."""
    events = ENGINE.decide(state, seat, cmd, rng(k))
    for ev in events:
        ENGINE.evolve(state, ev)
    return events


def start(players: int = 4, neutral: bool = False, seed: int = 0, sun: int | None = None) -> State:
    """Corners chosen (lowest free corner each), day 1 stage 1.  ``sun`` moves the sun and
    hourglass to that seat (so that seat acts first)."""
    s = new_game(players, neutral, seed)
    while s["phase"] == "corners":
        seat = s["active"]
        act(s, seat, ENGINE.legal(s, seat)[0])
    if sun is not None:
        s["sun"] = s["hourglass"] = sun
    return s


def choose_all(state: State, crews: dict[int, str]) -> list[Event]:
    """Stage 1: every seat chooses (seats not named take their first legal crew)."""
    events: list[Event] = []
    for seat in range(state["players"]):
        crew = crews.get(seat)
        cmd = c.ChooseCrew(crew) if crew else ENGINE.legal(state, seat)[0]
        if state["phase"] == "choose":
            events += act(state, seat, cmd)
    return events


def turn_of(players: int, seat: int, crew: str, others: dict[int, str] | None = None, **kw: object) -> State:
    """A state where ``seat`` is the active player with ``crew`` revealed, marker not placed."""
    s = start(players, sun=seat, **kw)  # type: ignore[arg-type]
    crews = dict(others or {})
    crews[seat] = crew
    for other in range(players):
        if other not in crews:
            crews[other] = next(x for x in data.CREWS if x not in crews.values() and x != crew)
    choose_all(s, crews)
    assert s["active"] == seat and s["turn"]["crew"] == crew
    return s


def clear_board(state: State) -> None:
    """Return every board treasure to the bag."""
    for cell in state["board"]:
        for t in cell:
            state["bag"][t] += 1
        cell.clear()


def put(state: State, row: int, col: int, *treasures: str) -> None:
    """Move treasures from the bag onto a space."""
    cell = row * state["size"] + col
    for t in treasures:
        state["bag"][t] -= 1
        state["board"][cell].append(t)


def cell(state: State, row: int, col: int) -> int:
    return row * state["size"] + col


def ship_to(state: State, seat: int, row: int, col: int) -> None:
    """Put a seat's ship on a space (returning that space's treasures to the bag)."""
    at = cell(state, row, col)
    for t in state["board"][at]:
        state["bag"][t] += 1
    state["board"][at] = []
    state["ships"][seat] = at
    turn = state["turn"]
    if turn and turn["seat"] == seat and turn["move"]:
        turn["move"]["visited"] = [at]


def give(state: State, seat: int, area: str, *treasures: str, crew: str = "") -> None:
    """Take treasures from the bag into a seat's storage, chest or a hold (first fitting slots)."""
    me = state["seats"][seat]
    for t in treasures:
        if t == data.GEM:
            state["gem_supply"] -= 1
        else:
            state["bag"][t] -= 1
        if area == "storage":
            if t == data.GEM:
                me["gems"] += 1
            else:
                me["storage"].append(t)
        elif area == "chest":
            me["chest"].append(t)
        elif area == "pending":
            me["pending"].append(t)
        else:
            hold = me["holds"][crew]
            icons = data.HOLDS[crew]
            slot = next(i for i, x in enumerate(hold) if x is None and (t in icons[i] or "*" in (t, icons[i])))
            hold[slot] = t


def complete_hold(state: State, seat: int, crew: str) -> None:
    """Mark a hold completed (as if filled earlier)."""
    state["seats"][seat]["completed"].append(crew)


def only_in_bag(state: State, colour: str) -> None:
    """Bag fixture: the bag holds only ``colour`` (breaks conservation: no invariant checks after)."""
    total = sum(state["bag"].values())
    state["bag"] = dict.fromkeys(data.COLOURS, 0)
    state["bag"][colour] = total


#: Seat counts and neutral-player options the hidden-information tests play.
CONFIGS = [(2, False), (2, True), (3, False), (4, False)]


def perturb(state: dict, viewer, r: random.Random) -> dict:
    """A copy of ``state`` with everything hidden from ``viewer`` reshuffled."""
    s = clone_state(state)
    others = [i for i in range(s["players"]) if i != viewer]
    pool = list(s["science_deck"])
    for i in others:
        pool.extend(s["seats"][i]["hand"])
    r.shuffle(pool)
    s["science_deck"] = [pool.pop() for _ in s["science_deck"]]
    for i in others:
        s["seats"][i]["hand"] = [pool.pop() for _ in s["seats"][i]["hand"]]
    assert not pool
    cards = s["discovery_stack"] + s["discovery_removed"]
    r.shuffle(cards)
    n = len(s["discovery_stack"])
    s["discovery_stack"], s["discovery_removed"] = cards[:n], cards[n:]
    r.shuffle(s["neutral_deck"])
    if s["phase"] == "choose" and others:
        for i in others:
            if s["seats"][i]["chosen"] is not None:  # WON-Q02: what was chosen is hidden, not whether
                free = [x for x in data.CREWS if x not in s["seats"][i]["played"]]
                s["seats"][i]["chosen"] = r.choice(free)
    return s
