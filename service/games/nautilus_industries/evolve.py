"""Folding events into the state.  ``evolve`` applies facts: it never checks a rule
and never draws; every decision was taken in ``decide`` and written into the event.

State layout (plain JSON data)::

    n            player count
    round        round number, from 1
    phase        "setup" | "action" | "market" | "upkeep" | "over"
    first        seat holding the first-player marker (NIN-011, NIN-113)
    line         tile ids in line order, position 0 next to the market chart (NIN-012, NIN-I02)
    tiles        per tile id: {"gems": {colour: n}, "subs": {colour: seat|None},
                               "upgrades": {colour: colour|None}, "moved": bool}
                 (one spot per colour, NIN-003; "moved" is the mark of NIN-071)
    bag          {colour: n} gems in the bag
    markers      True once the 10 marker gems are out of the bag (NIN-013, NIN-017)
    commodity    {colour: value 1..10}
    stock        {colour: space 0..24}
    certs        {company: [owner seat or None for shares 1..6]} (NIN-004)
    players      per seat: {"money", "capacity", "subs" (unused subs), "gems": {colour: n}}
    actions_done actions taken (or forfeited) in this action phase, 0..3N (NIN-030)
    pending      the half-done action of the seat to act, or None:
                 {"kind": "upgrade"|"switch", "tile": id, "colour": c}
    market       None outside the market phase, else {"position": p, "next_index": k,
                 "seller": seat|None, "sold": {colour: n}} (the sold pool, NIN-095)
    locked       True once the game end has locked both tracks (NIN-121)
    result       None, or the final result once the game is over
    forfeited    seats that left the game, in order (only once one has; NIN-Q07)

There is no bank: its money is unlimited (NIN-006), so only the players' money is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.games.base import Event, State, clone_state, with_forfeited
from service.games.nautilus_industries import data as D


def _zeros() -> dict[str, int]:
    return dict.fromkeys(D.COLOURS, 0)


def _game_started(state: State | None, d: dict[str, Any]) -> State:
    n = d["players"]
    return {
        "n": n,
        "round": 0,
        "phase": "setup",
        "first": 0,
        "line": list(range(n)),
        "tiles": [  # NIN-012: one zone tile per player; NIN-003: one spot per colour
            {
                "gems": _zeros(),
                "subs": dict.fromkeys(D.COLOURS),
                "upgrades": dict.fromkeys(D.COLOURS),
                "moved": False,
            }
            for _ in range(n)
        ],
        "bag": dict.fromkeys(D.COLOURS, D.GEMS_PER_COLOUR),
        "markers": False,
        "commodity": dict.fromkeys(D.COLOURS, 0),
        "stock": dict.fromkeys(D.COLOURS, D.STOCK_START),
        "certs": {c: [None] * len(D.SHARES) for c in D.COLOURS},  # NIN-018: all for sale
        "players": [  # NIN-010
            {
                "money": D.START_MONEY,
                "capacity": D.START_CAPACITY,
                "subs": D.SUBS_PER_PLAYER,
                "gems": _zeros(),
            }
            for _ in range(n)
        ],
        "actions_done": 0,
        "pending": None,
        "market": None,
        "locked": False,
        "result": None,
    }


def _first_player_chosen(state: State, d: dict[str, Any]) -> State:
    state["first"] = d["seat"]
    return state


def _markers_set_aside(state: State, d: dict[str, Any]) -> State:
    bag = state["bag"]
    for c, k in d["gems"].items():
        bag[c] -= k
    state["markers"] = True
    return state


def _gems_drawn(state: State, d: dict[str, Any]) -> State:
    bag = state["bag"]
    gems = state["tiles"][d["tile"]]["gems"]
    for c in d["gems"]:
        bag[c] -= 1
        gems[c] += 1
    return state


def _commodity_values_set(state: State, d: dict[str, Any]) -> State:
    state["commodity"] = dict(d["values"])
    return state


def _round_started(state: State, d: dict[str, Any]) -> State:
    state["round"] = d["round"]
    state["first"] = d["first"]
    state["phase"] = "action"
    state["actions_done"] = 0
    state["pending"] = None
    state["market"] = None
    for tile in state["tiles"]:
        tile["moved"] = False  # NIN-112
    return state


def _action_done(state: State) -> State:
    state["pending"] = None
    state["actions_done"] += 1
    return state


def _sub_placed(state: State, d: dict[str, Any]) -> State:
    state["players"][d["seat"]]["subs"] -= 1
    state["tiles"][d["tile"]]["subs"][d["colour"]] = d["seat"]
    if d["upgrade_offered"]:
        state["pending"] = {"kind": "upgrade", "tile": d["tile"], "colour": d["colour"]}
        return state
    return _action_done(state)


def _sub_upgraded(state: State, d: dict[str, Any]) -> State:
    state["players"][d["seat"]]["money"] -= d["cost"]
    state["bag"][d["upgrade"]] -= 1
    state["tiles"][d["tile"]]["upgrades"][d["colour"]] = d["upgrade"]
    return _action_done(state)


def _upgrade_declined(state: State, d: dict[str, Any]) -> State:
    return _action_done(state)


def _warehouse_upgraded(state: State, d: dict[str, Any]) -> State:
    state["players"][d["seat"]]["capacity"] = d["capacity"]
    return _action_done(state)


def _gem_chosen(state: State, d: dict[str, Any]) -> State:
    state["pending"] = {"kind": "switch", "tile": d["tile"], "colour": d["colour"]}
    return state


def _gems_switched(state: State, d: dict[str, Any]) -> State:
    a = state["tiles"][d["tile_a"]]["gems"]
    b = state["tiles"][d["tile_b"]]["gems"]
    ca, cb = d["colour_a"], d["colour_b"]
    a[ca] -= 1
    b[ca] += 1
    b[cb] -= 1
    a[cb] += 1
    return _action_done(state)


def _tiles_switched(state: State, d: dict[str, Any]) -> State:
    state["line"] = list(d["line"])
    state["tiles"][d["tile_a"]]["moved"] = True
    state["tiles"][d["tile_b"]]["moved"] = True
    return _action_done(state)


def _stock_purchased(state: State, d: dict[str, Any]) -> State:
    state["players"][d["seat"]]["money"] -= d["price"]
    state["certs"][d["company"]][d["shares"] - 1] = d["seat"]
    return _action_done(state)


def _action_forfeited(state: State, d: dict[str, Any]) -> State:
    return _action_done(state)


def _market_phase_started(state: State, d: dict[str, Any]) -> State:
    state["phase"] = "market"
    state["pending"] = None
    state["market"] = {"position": -1, "next_index": 0, "seller": None, "sold": _zeros()}
    return state


def _tile_resolution_started(state: State, d: dict[str, Any]) -> State:
    m = state["market"]
    m["position"] = d["position"]
    m["next_index"] = 0
    m["seller"] = None
    return state


def _sub_collected(state: State, d: dict[str, Any]) -> State:
    tile = state["tiles"][d["tile"]]
    player = state["players"][d["seat"]]
    c = d["colour"]
    tile["gems"][c] -= d["own"]
    player["gems"][c] += d["own"]
    up = d["upgrade"]
    if up is not None:
        tile["gems"][up] -= d["upgrade_gems"]
        player["gems"][up] += d["upgrade_gems"]
        # NIN-093, NIN-A03: the upgrade marker goes back to the bag right after this visit
        # (the collected upgrade gem came from the tile, not from the marker).
        state["bag"][up] += 1
        tile["upgrades"][c] = None  # NIN-045
    tile["subs"][c] = None
    player["subs"] += 1  # NIN-094
    return state


def _sell_turn_started(state: State, d: dict[str, Any]) -> State:
    m = state["market"]
    m["seller"] = d["seat"]
    m["next_index"] = d["index"] + 1
    return state


def _gems_sold(state: State, d: dict[str, Any]) -> State:
    player = state["players"][d["seat"]]
    player["gems"][d["colour"]] -= d["count"]
    player["money"] += d["money"]  # the bank pays at once (NIN-095; unlimited, NIN-006)
    state["market"]["sold"][d["colour"]] += d["count"]
    return state


def _gems_held(state: State, d: dict[str, Any]) -> State:
    state["market"]["seller"] = None
    return state


def _market_adjusted(state: State, d: dict[str, Any]) -> State:
    state["commodity"][d["colour"]] = d["commodity_after"]
    state["stock"][d["colour"]] = d["stock_after"]
    return state


def _sold_gems_returned(state: State, d: dict[str, Any]) -> State:
    m = state["market"]
    bag = state["bag"]
    for c, k in d["gems"].items():
        bag[c] += k
        m["sold"][c] -= k
    m["seller"] = None
    return state


def _game_end_triggered(state: State, d: dict[str, Any]) -> State:
    state["locked"] = True
    return state


def _final_sale(state: State, d: dict[str, Any]) -> State:
    player = state["players"][d["seat"]]
    bag = state["bag"]
    for c, k in d["gems"].items():
        player["gems"][c] -= k
        bag[c] += k  # sold to the bank; back in the bag so every gem stays counted (NIN-A15)
    player["money"] += d["money"]
    return state


def _game_ended(state: State, d: dict[str, Any]) -> State:
    state["phase"] = "over"
    state["market"] = None
    state["pending"] = None
    state["result"] = clone_state(d["result"])
    return state


def _seat_forfeited(state: State, d: dict[str, Any]) -> State:
    """NIN-Q07: the seat leaves: its subs come off the tiles (their upgrade markers back to the
    bag, as NIN-093), the gems it holds go back to the bag, and a half-done action or sell step
    of its own ends with it (the action is then forfeited like NIN-033's)."""
    seat = d["seat"]
    with_forfeited(state, seat)
    player = state["players"][seat]
    bag = state["bag"]
    for tile_id, colour, upgrade in d["subs"]:
        tile = state["tiles"][tile_id]
        tile["subs"][colour] = None
        if upgrade is not None:
            tile["upgrades"][colour] = None
            bag[upgrade] += 1
        player["subs"] += 1
    for c, k in d["gems"].items():
        player["gems"][c] -= k
        bag[c] += k
    if state["phase"] == "action" and state["pending"] is not None:
        n = state["n"]
        if (state["first"] + state["actions_done"]) % n == seat:
            state["pending"] = None
    market = state["market"]
    if market is not None and market["seller"] == seat:
        market["seller"] = None
    return state


def _upkeep_phase_started(state: State, d: dict[str, Any]) -> State:
    state["phase"] = "upkeep"
    state["market"] = None
    return state


APPLY: dict[str, Callable[[Any, dict[str, Any]], State]] = {
    "GameStarted": _game_started,
    "FirstPlayerChosen": _first_player_chosen,
    "MarkersSetAside": _markers_set_aside,
    "GemsDrawn": _gems_drawn,
    "CommodityValuesSet": _commodity_values_set,
    "RoundStarted": _round_started,
    "SubPlaced": _sub_placed,
    "SubUpgraded": _sub_upgraded,
    "UpgradeDeclined": _upgrade_declined,
    "WarehouseUpgraded": _warehouse_upgraded,
    "GemChosen": _gem_chosen,
    "GemsSwitched": _gems_switched,
    "TilesSwitched": _tiles_switched,
    "StockPurchased": _stock_purchased,
    "ActionForfeited": _action_forfeited,
    "MarketPhaseStarted": _market_phase_started,
    "TileResolutionStarted": _tile_resolution_started,
    "SubCollected": _sub_collected,
    "SellTurnStarted": _sell_turn_started,
    "GemsSold": _gems_sold,
    "GemsHeld": _gems_held,
    "MarketAdjusted": _market_adjusted,
    "SoldGemsReturned": _sold_gems_returned,
    "GameEndTriggered": _game_end_triggered,
    "FinalSale": _final_sale,
    "GameEnded": _game_ended,
    "UpkeepPhaseStarted": _upkeep_phase_started,
    "SeatForfeited": _seat_forfeited,
}


def evolve(state: State | None, event: Event) -> State:
    """Apply one event (in place) and return the state."""
    try:
        apply = APPLY[event.type]
    except KeyError:
        raise ValueError(f"unknown event type {event.type!r}") from None
    if state is None and event.type != "GameStarted":
        raise ValueError("the first event must be GameStarted")
    return apply(state, event.data)
