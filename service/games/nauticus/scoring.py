"""Final scoring and the winner (NAU-190 to NAU-194), the stored ``result``, and the crown count (NAU-140)."""

from __future__ import annotations

from typing import Any

from service.games.base import State, ranks_from_scores
from service.games.nauticus import hulls
from service.games.nauticus.data import CROWN, CROWN_MAST, CROWN_SAIL, SHIP_VP, TALER_PER_VP, goods_set_vp


def crowns(seat: dict[str, Any]) -> int:
    """NAU-140: crown masts and sails owned (warehouse or ships) + pass tiles turned this round (NAU-153, at
    most 3 tiles: a 4th pass adds nothing, NAU-154).  Reward crowns count as soon as they are owned (NAU-A18)."""
    wh = seat["warehouse"]
    n = wh.get(CROWN_MAST, 0) + wh.get(CROWN_SAIL, 0) + min(seat["passes"], 3)
    for ship in seat["ships"]:
        n += ship["masts"].count(CROWN) + ship["sails"].count(CROWN)
    return n


def seat_breakdown(seat: dict[str, Any]) -> dict[str, int]:
    """Every scoring category of the rulebook's final scoring for one player (the seat is not changed: the
    Taler are kept for the tie-break, NAU-193)."""
    delivered = sum(goods_set_vp(n) for n in seat["delivered"].values())  # NAU-190
    ships_vp = 0
    unfinished_parts = 0
    goods_on_ships = 0
    for ship in seat["ships"]:
        goods_on_ships += len(ship["goods"]) - ship["goods"].count(None)  # NAU-A15: any ship's goods
        if ship["complete"] and hulls.is_complete(ship):
            ships_vp += SHIP_VP[len(ship["hull"])]  # NAU-191
        else:
            unfinished_parts += len(ship["hull"])  # NAU-192: parts of unfinished ships only (NAU-A15)
            unfinished_parts += len(ship["masts"]) - ship["masts"].count(None)
            unfinished_parts += len(ship["sails"]) - ship["sails"].count(None)
    wh_tiles = sum(seat["warehouse"].values())
    material = seat["workers"] + wh_tiles + unfinished_parts + goods_on_ships  # NAU-192
    taler_total = seat["taler"] + material  # NAU-193
    material_vp = taler_total // TALER_PER_VP  # NAU-193
    return {
        "track": seat["vp"],
        "delivered_goods": delivered,
        "completed_ships": ships_vp,
        "remaining_material_vp": material_vp,
        "material_taler": material,
        "taler_total": taler_total,
        "remainder": taler_total % TALER_PER_VP,  # NAU-A16: the tie-break's "remaining money"
        "total": seat["vp"] + delivered + ships_vp + material_vp,
    }


def final_result(state: State) -> dict[str, Any]:
    """NAU-194: most VP; tie -> larger remainder (0/1/2 Taler); tie -> more Taler in total; else shared."""
    n = state["players"]
    breakdown = {str(i): seat_breakdown(state["seats"][i]) for i in range(n)}
    keys = {
        i: (breakdown[str(i)]["total"], breakdown[str(i)]["remainder"], breakdown[str(i)]["taler_total"])
        for i in range(n)
    }
    ranking, ranks = ranks_from_scores(keys)
    # Which tie-break decided: the deepest level needed to separate any two seats tied on VP.
    depth = 0
    for a in range(n):
        for b in range(a + 1, n):
            ka, kb = keys[a], keys[b]
            if ka[0] != kb[0]:
                continue
            level = 1 if ka[1] != kb[1] else (2 if ka[2] != kb[2] else 3)
            depth = max(depth, level)
    tiebreak = [
        None,
        "remaining money: total Taler mod 3 (NAU-194)",
        "most Taler in total (NAU-194)",
        "tie not broken: shared place (NAU-194)",
    ][depth]
    return {
        "scores": {str(i): keys[i][0] for i in range(n)},
        "ranks": ranks,
        "ranking": ranking,
        "breakdown": breakdown,
        "tiebreak": tiebreak,
    }


def result(state: State) -> dict[str, Any] | None:
    """The stored result (written by ``GameEnded``), or None while the game runs.  ``GameEngine.result`` hands
    every caller a fresh copy."""
    return state["result"]
