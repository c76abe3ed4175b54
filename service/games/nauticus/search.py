"""What a search needs of Nauticus (``determinize``, ``evaluate``); see ``service/games/base.py``.

Nauticus has no hidden information (NAU-005): a seat's view is the whole state plus derived numbers, so the
one state consistent with a view is the view without them.  Future layouts (NAU-018) are not in the state:
a search draws them with its own :class:`~service.games.rng.Rng` when it decides.
"""

from __future__ import annotations

from typing import Any

from service.games.base import State, clone_state
from service.games.nauticus import hulls
from service.games.nauticus.data import (
    EVAL_GOODS_ON_SHIPS,
    EVAL_SHIP_IN_PROGRESS,
    EVAL_STEP_TO_SHIP,
    GOODS,
    SHIP_VP,
    TALER_PER_VP,
    goods_set_vp,
)
from service.games.rng import Rng

#: What ``views.view`` adds to the state (NAU-040, NAU-052, NAU-140), removed again here.
_DERIVED = ("viewer", "blue_by_space", "prices_by_space")


def determinize(view: dict[str, Any], seat: int, rng: Rng) -> State:
    """The state behind ``view`` (NAU-005: nothing is hidden, so there is no choice to draw)."""
    state = clone_state(view)
    for key in _DERIVED:
        state.pop(key, None)
    for seat_state in state["seats"]:
        seat_state.pop("crowns", None)
    return state


def _ship_progress(ship: dict[str, Any], closed: bool, step_to_ship: float) -> float:
    """The share of what an unfinished ship scores complete (NAU-191) that its placed hull parts, masts and
    sails make up, in VP before :data:`EVAL_SHIP_IN_PROGRESS`: a closed hull counts as ``step_to_ship``
    placed masts / sails, so a search sees building as progress."""
    size = min(max(len(ship["hull"]), 1), 4)
    slots = 2 * len(ship["hull"])
    filled = slots - ship["masts"].count(None) - ship["sails"].count(None)
    return (filled + (step_to_ship if closed else 0)) / (slots + step_to_ship) * SHIP_VP[size]


def evaluate_components(state: State, step_to_ship: float = EVAL_STEP_TO_SHIP) -> list[dict[str, float]]:
    """Per seat, the parts :func:`evaluate` adds up, each before its weight: ``scored`` (the final scoring
    as if the game ended now, NAU-190 to NAU-193, without rounding the Taler down; weight 1),
    ``ship_in_progress`` (unfinished ships, weight :data:`EVAL_SHIP_IN_PROGRESS`) and ``goods_on_ships``
    (the delivery VP of goods waiting on ships, weight :data:`EVAL_GOODS_ON_SHIPS`).  ``step_to_ship`` is
    :data:`EVAL_STEP_TO_SHIP` unless a tuning run tries another.

    The scoring is ``scoring.seat_breakdown``'s, counted in one pass over the ships: a search evaluates
    thousands of positions a decision, and this was most of an iteration's time."""
    out = []
    for seat in state["seats"]:
        delivered = seat["delivered"]
        delivered_vp = sum(goods_set_vp(n) for n in delivered.values())  # NAU-190
        ships_vp = 0
        material = seat["workers"] + sum(seat["warehouse"].values())  # NAU-192
        building = 0.0
        on_ships: dict[str, int] = {}
        for ship in seat["ships"]:
            for good in ship["goods"]:
                if good is not None:  # NAU-A15: any ship's goods
                    on_ships[good] = on_ships.get(good, 0) + 1
                    material += 1
            closed = hulls.hull_closed(ship["hull"])
            masts, sails = ship["masts"], ship["sails"]
            if ship["complete"] and closed and None not in masts and None not in sails:  # NAU-160
                ships_vp += SHIP_VP[len(ship["hull"])]  # NAU-191
            else:
                # NAU-192: parts of unfinished ships only (NAU-A15)
                material += len(ship["hull"]) + len(masts) - masts.count(None) + len(sails) - sails.count(None)
                building += _ship_progress(ship, closed, step_to_ship)
        waiting = 0.0
        for good in GOODS:
            n = on_ships.get(good, 0)
            if n:
                had = delivered.get(good, 0)
                waiting += goods_set_vp(had + n) - goods_set_vp(had)
        scored = seat["vp"] + delivered_vp + ships_vp + (seat["taler"] + material) / TALER_PER_VP  # NAU-193
        out.append({"scored": float(scored), "ship_in_progress": building, "goods_on_ships": waiting})
    return out


def evaluate(state: State) -> list[float]:
    """Per seat: the final scoring as if the game ended now, plus a share of each unfinished ship's value and
    of its goods' delivery (:func:`evaluate_components`, weighted)."""
    return [
        c["scored"] + EVAL_SHIP_IN_PROGRESS * c["ship_in_progress"] + EVAL_GOODS_ON_SHIPS * c["goods_on_ships"]
        for c in evaluate_components(state)
    ]
