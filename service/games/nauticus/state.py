"""The shape of the Nauticus state and the small questions about it that evolve, legal, rules and refusals share.

State (JSON-compatible dict):
  players, rounds, round (1-based), phase (action phases finished this round), step, start_player,
  turntable_anchor (space the turntable's anchor segment points at), layout (action tile per space),
  face_down (per space), anchor_tile (space or None), space (chosen space or None), blue (its blue workers),
  acting (seat or None), stacks (item -> count), seats (per-player dicts), turn (the acting seat's turn), result.

``step`` is "choose" (start player picks a tile), "act" (``acting`` takes their turn) or "over"; the steps
"layout", "phase_end", "round_end" and "scoring" only exist between the events of one decision.

``turn`` is ``{"main": act, "extra": act or None, "rewards": pending rewards or None}``, where an *act* is one
carrying-out of an action (:func:`new_act`).
"""

from __future__ import annotations

from typing import Any

from service.games.base import State
from service.games.nauticus.data import (
    EXTRA_PRICE,
    ITEMS_OF,
    PRICES,
    REPEAT_PRICE,
    SIZE,
    SPACES,
    TURNTABLE,
    WAREHOUSE_CAPACITY,
)


def new_act(action: str, blue: int, is_extra: bool) -> dict[str, Any]:
    """One carrying-out of an action: the board action or the extra action, each with its own counts (NAU-Q01)."""
    return {
        "action": action,
        "is_extra": is_extra,
        "blue": blue,  # blue workers left for this player's turn (NAU-041, NAU-042)
        "uses": 0,
        "bought": {},  # item -> copies bought in this action (NAU-053, NAU-054)
        "gift": 0,  # 0 not earned, 1 pending, 2 taken or forfeited (NAU-055, NAU-056)
        "crown_vp": 0,  # crown VP gained by this action (NAU-142: the extra action's own cap)
        "done": False,
    }


def new_turn(action: str, blue: int) -> dict[str, Any]:
    """A player's turn in an action phase: every player gets the space's blue workers afresh (NAU-041)."""
    return {"main": new_act(action, blue, False), "extra": None, "rewards": None}


def current_act(turn: dict[str, Any]) -> dict[str, Any]:
    """:func:`running_act` where the rules have established that one runs (an event of
    an action, a command the action allows)."""
    act = running_act(turn)
    assert act is not None, "no action is running"
    return act


def running_act(turn: dict[str, Any]) -> dict[str, Any] | None:
    """The action the player is carrying out now: an unfinished extra action first, else the board action."""
    extra = turn["extra"]
    if extra is not None and not extra["done"]:
        return extra
    main = turn["main"]
    return None if main["done"] else main


def extra_available(seat: dict[str, Any], turn: dict[str, Any]) -> bool:
    """NAU-170: once per game (tile still held), once in this turn."""
    return seat["extra_tile"] and turn["extra"] is None


def turntable_blue(anchor: int, space: int) -> int:
    """NAU-040: blue workers at ``space`` when the turntable's anchor segment points at ``anchor``."""
    return TURNTABLE[(space - anchor) % SPACES]


def blue_at(state: State, space: int) -> int:
    """NAU-040, NAU-184: blue workers at a space this round."""
    return turntable_blue(state["turntable_anchor"], space)


def fits(seat: dict[str, Any], item: str) -> bool:
    """NAU-111, NAU-113: room in the warehouse (masts take 2 spaces); only the total counts (NAU-112, NAU-A04)."""
    return WAREHOUSE_CAPACITY - seat["wh_used"] >= SIZE[item]


def price(state: State, act: dict[str, Any], item: str) -> int:
    """What the next copy of ``item`` costs in this action.

    NAU-052, NAU-053: the first copy of a type costs the number printed at the chosen space (NAU-A07: the
    copies are priced in the order they are bought); NAU-054: every further copy 4 Taler; NAU-173: in the
    extra action the first copy costs 2 Taler.
    """
    if act["bought"].get(item):
        return REPEAT_PRICE
    if act["is_extra"]:
        return EXTRA_PRICE
    return PRICES[state["space"]][ITEMS_OF[act["action"]].index(item)]
