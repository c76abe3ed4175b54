"""``evolve``: apply one Nauticus event to the state, in place, never drawing and never deciding.

Every random outcome and every choice is already written in the event (the layout in ``ActionTilesLaidOut``,
the price and the worker kind in ``ItemBought``...), so folding a stream always gives the same state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.games.base import Event, State, clone_state, with_forfeited
from service.games.nauticus import hulls
from service.games.nauticus.data import (
    CROWN_MAST,
    CROWN_SAIL,
    NAME,
    PHASES_PER_ROUND,
    REWARD_TALER,
    REWARD_VP,
    REWARD_WORKERS,
    SIZE,
    SPACES,
)
from service.games.nauticus.state import current_act, new_act, new_turn


def _wh_add(seat: dict[str, Any], item: str) -> None:
    wh = seat["warehouse"]
    wh[item] = wh.get(item, 0) + 1
    seat["wh_used"] += SIZE[item]


def _wh_remove(seat: dict[str, Any], item: str) -> None:
    wh = seat["warehouse"]
    n = wh[item] - 1
    if n:
        wh[item] = n
    else:
        del wh[item]
    seat["wh_used"] -= SIZE[item]


def _spend_worker(seat: dict[str, Any], act: dict[str, Any], blue: bool) -> None:
    """NAU-050: one worker per use, in the extra action too (NAU-174); NAU-042: a blue one if the event says so,
    NAU-043: else one from personal stock (returned to the unlimited supply, NAU-004)."""
    if blue:
        act["blue"] -= 1
    else:
        seat["workers"] -= 1
    act["uses"] += 1


def _put(state: State, seat: dict[str, Any], d: dict[str, Any]) -> None:
    """A tile into the warehouse or onto the shipyard, where it never moves again (NAU-076, NAU-103)."""
    if d["to"] == "warehouse":
        _wh_add(seat, d["item"])
    else:
        hulls.place(seat["ships"], d["item"], d["to"], d["ship"], d["position"])


def _game_started(state: State | None, d: dict[str, Any]) -> State:
    """The opening state (NAU-010 to NAU-017 in the event's data, from ``setup``)."""
    return {
        "game": NAME,
        "players": d["players"],
        "rounds": d["rounds"],
        "round": 1,  # NAU-011
        "phase": 0,
        "step": "layout",
        "start_player": d["start_player"],
        "turntable_anchor": d["turntable_anchor"],
        "layout": [None] * SPACES,
        "face_down": [False] * SPACES,
        "anchor_tile": None,
        "space": None,
        "blue": 0,
        "acting": None,
        "stacks": dict(d["stacks"]),
        "seats": [
            {
                "taler": s["taler"],
                "workers": s["workers"],
                "vp": s["vp"],
                "warehouse": {},
                "wh_used": 0,
                "ships": [],
                "delivered": {},
                "passes": 0,  # pass tiles turned this round (NAU-013, NAU-151); may exceed 3 (NAU-154, NAU-A03)
                "extra_tile": True,  # NAU-013: the extra-action tile
                "crown_vp_round": 0,  # NAU-142: crown VP scored this round by the board action
            }
            for s in d["seats"]
        ],
        "turn": None,
        "result": None,
    }


def _tiles_laid_out(state: State, d: dict[str, Any]) -> State:
    """NAU-018, NAU-184: the turntable turned, the anchor tile set aside, the tiles face up in their new places."""
    state["turntable_anchor"] = d["turntable_anchor"]
    state["layout"] = list(d["layout"])
    state["face_down"] = [False] * SPACES
    state["anchor_tile"] = None
    state["phase"] = 0
    state["step"] = "choose"
    return state


def _action_chosen(state: State, d: dict[str, Any]) -> State:
    """NAU-023: the start player takes the space's bonus (a bonus tile to the warehouse, NAU-057), then the
    start player's turn begins with the space's blue workers."""
    seat = state["seats"][d["seat"]]
    seat["workers"] += d["bonus_workers"]
    seat["vp"] += d["bonus_vp"]
    seat["taler"] += d["bonus_taler"]
    if d["bonus_item"]:
        state["stacks"][d["bonus_item"]] -= 1
        _wh_add(seat, d["bonus_item"])
    state["space"] = d["space"]
    state["blue"] = d["blue"]
    state["acting"] = d["seat"]
    state["step"] = "act"
    state["turn"] = new_turn(d["action"], d["blue"])
    return state


def _action_passed(state: State, d: dict[str, Any]) -> State:
    """NAU-151: one more pass tile turned; NAU-044: the blue workers are left unused."""
    state["seats"][d["seat"]]["passes"] += 1
    main = state["turn"]["main"]
    main["done"] = True
    return state


def _item_bought(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    act = current_act(state["turn"])
    item = d["item"]
    seat["taler"] -= d["price"]
    _spend_worker(seat, act, d["blue"])
    state["stacks"][item] -= 1
    bought = act["bought"]
    bought[item] = bought.get(item, 0) + 1
    if act["gift"] == 0 and len(bought) == 4:
        act["gift"] = 1  # NAU-055: all 4 types bought in this action; NAU-056: once
    _put(state, seat, d)
    return state


def _gift_taken(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    state["stacks"][d["item"]] -= 1
    _wh_add(seat, d["item"])
    current_act(state["turn"])["gift"] = 2
    return state


def _gift_forfeited(state: State, d: dict[str, Any]) -> State:
    current_act(state["turn"])["gift"] = 2
    return state


def _tile_transported(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    _spend_worker(seat, current_act(state["turn"]), d["blue"])
    _wh_remove(seat, d["item"])
    _put(state, seat, d)
    return state


def _money_withdrawn(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    _spend_worker(seat, current_act(state["turn"]), d["blue"])
    seat["taler"] += d["taler"]
    return state


def _goods_delivered(state: State, d: dict[str, Any]) -> State:
    """NAU-131: the whole cargo, 1 worker per good; NAU-133: kept by type; NAU-134: the ship may be reloaded."""
    seat = state["seats"][d["seat"]]
    act = current_act(state["turn"])
    act["blue"] -= d["blue"]
    seat["workers"] -= d["own"]
    act["uses"] += d["blue"] + d["own"]
    ship = seat["ships"][d["ship"]]
    delivered = seat["delivered"]
    for good in d["goods"]:
        delivered[good] = delivered.get(good, 0) + 1
    ship["goods"] = [None] * len(ship["hull"])
    return state


def _crowns_scored(state: State, d: dict[str, Any]) -> State:
    """NAU-141: the VP of one use; the board action's VP count against the round's cap, the extra action's
    against its own (NAU-142, NAU-A11)."""
    seat = state["seats"][d["seat"]]
    act = current_act(state["turn"])
    _spend_worker(seat, act, d["blue"])
    seat["vp"] += d["vp"]
    act["crown_vp"] += d["vp"]
    if not act["is_extra"]:
        seat["crown_vp_round"] += d["vp"]
    return state


def _ship_completed(state: State, d: dict[str, Any]) -> State:
    """NAU-161: the turn is interrupted for one reward per mast; NAU-165: the flag means once only."""
    seat = state["seats"][d["seat"]]
    seat["ships"][d["ship"]]["complete"] = True
    state["turn"]["rewards"] = {"ship": d["ship"], "left": d["rewards"], "taken": {}}
    return state


def _reward_taken(state: State, d: dict[str, Any]) -> State:
    """NAU-162: tiles to the warehouse (NAU-057), VP, Taler or workers at once; NAU-164: usable at once."""
    seat = state["seats"][d["seat"]]
    reward = d["reward"]
    if reward == "crown_mast":
        state["stacks"][CROWN_MAST] -= 1
        _wh_add(seat, CROWN_MAST)
    elif reward == "crown_sail":
        state["stacks"][CROWN_SAIL] -= 1
        _wh_add(seat, CROWN_SAIL)
    elif reward == "victory_points":
        seat["vp"] += REWARD_VP
    elif reward == "taler":
        seat["taler"] += REWARD_TALER
    elif reward == "workers":
        seat["workers"] += REWARD_WORKERS
    else:
        for good in d["goods"]:
            state["stacks"][good] -= 1
            _wh_add(seat, good)
    rewards = state["turn"]["rewards"]
    taken = rewards["taken"]
    taken[reward] = taken.get(reward, 0) + 1
    rewards["left"] -= 1
    if rewards["left"] == 0:
        state["turn"]["rewards"] = None
    return state


def _extra_action_started(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    seat["extra_tile"] = False  # NAU-175
    seat["workers"] += d["workers"]  # NAU-171, NAU-A14: into personal stock
    turn = state["turn"]
    main = turn["main"]
    if main["uses"] > 0:
        main["done"] = True  # NAU-A13: after the board action, never between two of its uses
    turn["extra"] = new_act(d["action"], 0, True)  # NAU-176, NAU-A12: no blue workers
    return state


def _extra_action_ended(state: State, d: dict[str, Any]) -> State:
    state["turn"]["extra"]["done"] = True
    return state


def _turn_ended(state: State, d: dict[str, Any]) -> State:
    """NAU-025: the next player clockwise takes a turn with the same action (NAU-041: fresh blue workers);
    NAU-042: unused blue workers are lost.  ``next`` is None when the phase is over."""
    nxt = d["next"]
    if nxt is None:
        state["acting"] = None
        state["turn"] = None
        state["step"] = "phase_end"
    else:
        state["acting"] = nxt
        state["turn"] = new_turn(state["layout"][state["space"]], state["blue"])
    return state


def _phase_ended(state: State, d: dict[str, Any]) -> State:
    """NAU-026, NAU-027, NAU-028; after the 7th phase the round ends (NAU-021), and the figure's holder will
    begin the next round (NAU-185)."""
    state["face_down"][d["space"]] = True  # NAU-026
    if d["anchor_tile"] is not None:
        state["anchor_tile"] = d["anchor_tile"]  # NAU-027
    state["phase"] += 1
    state["start_player"] = d["start_player"]  # NAU-028
    state["space"] = None
    state["blue"] = 0
    state["step"] = "round_end" if state["phase"] >= PHASES_PER_ROUND else "choose"
    return state


def _round_ended(state: State, d: dict[str, Any]) -> State:
    """NAU-180: pass-tile penalties; no income at a round change (NAU-029)."""
    for seat, penalty in zip(state["seats"], d["penalties"], strict=True):
        seat["vp"] -= penalty  # NAU-180; NAU-181: VP may go below 0
        seat["passes"] = 0  # NAU-182: pass tiles turned back, their crowns gone
        seat["crown_vp_round"] = 0  # NAU-142
    state["round"] += 1  # NAU-183: after the last round, final scoring
    state["step"] = "scoring" if state["round"] > state["rounds"] else "layout"
    return state


def _seat_forfeited(state: State, d: dict[str, Any]) -> State:
    """NAU-Q10: the seat leaves; if it held the start player's figure before choosing, the figure
    passes clockwise to a seat still playing (``start_player`` in the event)."""
    with_forfeited(state, d["seat"])
    if "start_player" in d:
        state["start_player"] = d["start_player"]
    return state


def _game_ended(state: State, d: dict[str, Any]) -> State:
    state["result"] = clone_state(d["result"])
    state["step"] = "over"
    state["acting"] = None
    return state


_HANDLERS: dict[str, Callable[[Any, dict[str, Any]], State]] = {
    "GameStarted": _game_started,
    "ActionTilesLaidOut": _tiles_laid_out,
    "ActionChosen": _action_chosen,
    "ActionPassed": _action_passed,
    "ItemBought": _item_bought,
    "GiftTaken": _gift_taken,
    "GiftForfeited": _gift_forfeited,
    "TileTransported": _tile_transported,
    "MoneyWithdrawn": _money_withdrawn,
    "GoodsDelivered": _goods_delivered,
    "CrownsScored": _crowns_scored,
    "ShipCompleted": _ship_completed,
    "RewardTaken": _reward_taken,
    "ExtraActionStarted": _extra_action_started,
    "ExtraActionEnded": _extra_action_ended,
    "TurnEnded": _turn_ended,
    "PhaseEnded": _phase_ended,
    "RoundEnded": _round_ended,
    "GameEnded": _game_ended,
    "SeatForfeited": _seat_forfeited,
}


def evolve(state: State | None, event: Event) -> State:
    """Apply one event in place and return the state (the first event, GameStarted, creates it)."""
    handler = _HANDLERS.get(event.type)
    if handler is None:
        raise ValueError(f"unknown Nauticus event {event.type!r}")
    return handler(state, event.data)
