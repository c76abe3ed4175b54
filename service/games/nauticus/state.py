"""The Nauticus state and ``evolve``: applying one event, in place, never drawing and never deciding.

State (JSON-compatible dict):
  players, rounds, round (1-based), phase (action phases finished this round), step, start_player,
  turntable_anchor (space the turntable's anchor segment points at), layout (action tile per space),
  face_down (per space), anchor_tile (space or None), space (chosen space or None), blue (its blue workers),
  acting (seat or None), stacks (item -> count), seats (per-player dicts), turn (the acting seat's turn), result.

``step`` is "choose" (start player picks a tile), "act" (``acting`` takes their turn) or "over"; the steps
"layout", "phase_end", "round_end" and "scoring" only exist between the events of one decision.
"""

from __future__ import annotations

from typing import Any

from service.games.base import Event, State, clone_state
from service.games.nauticus import hulls
from service.games.nauticus.data import (
    CROWN_MAST,
    CROWN_SAIL,
    PHASES_PER_ROUND,
    REWARD_TALER,
    REWARD_VP,
    REWARD_WORKERS,
    SIZE,
    SPACES,
)


def new_act(action: str, blue: int, is_extra: bool) -> dict[str, Any]:
    """One carrying-out of an action: the board action or the extra action (NAU-Q01)."""
    return {
        "action": action,
        "is_extra": is_extra,
        "blue": blue,  # blue workers left for this player's turn (NAU-041/042)
        "uses": 0,
        "bought": {},  # item -> copies bought in this action (NAU-053/054)
        "gift": 0,  # 0 not earned, 1 pending, 2 taken or forfeited (NAU-055/056)
        "crown_vp": 0,  # crown VP gained by this action (NAU-142, the extra action's own cap)
        "done": False,
    }


def new_turn(action: str, blue: int) -> dict[str, Any]:
    return {"main": new_act(action, blue, False), "extra": None, "rewards": None}


def running_act(turn: dict[str, Any]) -> dict[str, Any] | None:
    """The action the player is carrying out now: an unfinished extra action first, else the board action."""
    extra = turn["extra"]
    if extra is not None and not extra["done"]:
        return extra
    main = turn["main"]
    return None if main["done"] else main


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
    """NAU-042/043: a blue worker if the event says so, else one from personal stock."""
    if blue:
        act["blue"] -= 1
    else:
        seat["workers"] -= 1
    act["uses"] += 1


def _put(state: State, seat: dict[str, Any], d: dict[str, Any]) -> None:
    if d["to"] == "warehouse":
        _wh_add(seat, d["item"])
    else:
        hulls.place(seat["ships"], d["item"], d["to"], d["ship"], d["position"])


def _game_started(state: State | None, d: dict[str, Any]) -> State:
    return {
        "game": "nauticus",
        "players": d["players"],
        "rounds": d["rounds"],
        "round": 1,
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
                "passes": 0,  # pass tiles turned this round (NAU-151); may exceed 3 (NAU-154)
                "extra_tile": True,  # NAU-013
                "crown_vp_round": 0,  # NAU-142
            }
            for s in d["seats"]
        ],
        "turn": None,
        "result": None,
    }


def _tiles_laid_out(state: State, d: dict[str, Any]) -> State:
    state["turntable_anchor"] = d["turntable_anchor"]
    state["layout"] = list(d["layout"])
    state["face_down"] = [False] * SPACES
    state["anchor_tile"] = None
    state["phase"] = 0
    state["step"] = "choose"
    return state


def _action_chosen(state: State, d: dict[str, Any]) -> State:
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
    state["seats"][d["seat"]]["passes"] += 1
    main = state["turn"]["main"]
    main["done"] = True
    return state


def _item_bought(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    act = running_act(state["turn"])
    item = d["item"]
    seat["taler"] -= d["price"]
    _spend_worker(seat, act, d["blue"])
    state["stacks"][item] -= 1
    bought = act["bought"]
    bought[item] = bought.get(item, 0) + 1
    if act["gift"] == 0 and len(bought) == 4:
        act["gift"] = 1  # NAU-055: all 4 types bought in this action
    _put(state, seat, d)
    return state


def _gift_taken(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    state["stacks"][d["item"]] -= 1
    _wh_add(seat, d["item"])
    running_act(state["turn"])["gift"] = 2
    return state


def _gift_forfeited(state: State, d: dict[str, Any]) -> State:
    running_act(state["turn"])["gift"] = 2
    return state


def _tile_transported(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    _spend_worker(seat, running_act(state["turn"]), d["blue"])
    _wh_remove(seat, d["item"])
    _put(state, seat, d)
    return state


def _money_withdrawn(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    _spend_worker(seat, running_act(state["turn"]), d["blue"])
    seat["taler"] += d["taler"]
    return state


def _goods_delivered(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    act = running_act(state["turn"])
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
    seat = state["seats"][d["seat"]]
    act = running_act(state["turn"])
    _spend_worker(seat, act, d["blue"])
    seat["vp"] += d["vp"]
    act["crown_vp"] += d["vp"]
    if not act["is_extra"]:
        seat["crown_vp_round"] += d["vp"]
    return state


def _ship_completed(state: State, d: dict[str, Any]) -> State:
    seat = state["seats"][d["seat"]]
    seat["ships"][d["ship"]]["complete"] = True
    state["turn"]["rewards"] = {"ship": d["ship"], "left": d["rewards"], "taken": {}}
    return state


def _reward_taken(state: State, d: dict[str, Any]) -> State:
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
    seat["workers"] += d["workers"]  # NAU-171 / NAU-A14
    turn = state["turn"]
    main = turn["main"]
    if main["uses"] > 0:
        main["done"] = True  # NAU-A13: after the board action, never between two of its uses
    turn["extra"] = new_act(d["action"], 0, True)  # NAU-176: no blue workers
    return state


def _extra_action_ended(state: State, d: dict[str, Any]) -> State:
    state["turn"]["extra"]["done"] = True
    return state


def _turn_ended(state: State, d: dict[str, Any]) -> State:
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
    for seat, penalty in zip(state["seats"], d["penalties"], strict=True):
        seat["vp"] -= penalty  # NAU-180/181
        seat["passes"] = 0  # NAU-182
        seat["crown_vp_round"] = 0  # NAU-142
    state["round"] += 1  # NAU-183
    state["step"] = "scoring" if state["round"] > state["rounds"] else "layout"
    return state


def _game_ended(state: State, d: dict[str, Any]) -> State:
    state["result"] = clone_state(d["result"])
    state["step"] = "over"
    state["acting"] = None
    return state


_HANDLERS = {
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
}


def evolve(state: State | None, event: Event) -> State:
    """Apply one event in place and return the state (the first event, GameStarted, creates it)."""
    handler = _HANDLERS.get(event.type)
    if handler is None:
        raise ValueError(f"unknown Nauticus event {event.type!r}")
    return handler(state, event.data)
