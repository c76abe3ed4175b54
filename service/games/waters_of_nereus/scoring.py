"""Game-end science cards, final conversions and the result (WON-127, WON-141, WON-142).

``result`` returns the result stored in the state by ``GameEnded`` (``None`` while the game
runs); the engine template hands every caller a fresh copy of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from service.games.base import State, ranks_from_scores
from service.games.waters_of_nereus import data

if TYPE_CHECKING:  # pragma: no cover
    from service.games.waters_of_nereus.context import Ctx


def result(state: State) -> dict[str, Any] | None:
    """The stored result (WON-142), or ``None`` while the game runs."""
    return state["result"]


def end_card_vp(state: State, seat: dict[str, Any], card: str) -> int:
    """WON-D06 SC13-SC22, evaluated when played (after paying its 1 science power)."""
    effect = data.SCIENCE_CARDS[card][1]
    if effect == "per_hold":
        return data.END_PER_HOLD * len(seat["completed"])
    if effect == "per_chest":
        return len(seat["chest"])
    if effect == "per_gem":
        return data.END_PER_GEM * seat["gems"]
    if effect == "per_4_gold":
        return seat["gold"] // data.END_GOLD_DIVISOR
    if effect == "per_science":
        return data.END_PER_SCIENCE * seat["science"]  # power already lowered by the card
    if effect == "full_chest":
        return data.END_FULL_CHEST if len(seat["chest"]) == len(data.CHEST_ORDER) else 0
    if effect == "storage_colours":
        return len(set(seat["storage"]))
    if effect == "four_holds":
        return data.END_FOUR_HOLDS if len(seat["completed"]) >= data.END_FOUR_HOLDS_NEEDED else 0
    return 0


def final_scoring(ctx: Ctx) -> None:
    """WON-141 steps 2 and 3 (step 1, the cards, happened in each seat's final turn, WON-Q10):
    storage sold, then 1 VP per full 5 gold; treasures in incomplete holds are worth nothing."""
    s = ctx.s
    for i, seat in enumerate(s["seats"]):
        gold = data.SELL_TREASURE * len(seat["storage"]) + data.SELL_GEM * seat["gems"]
        ctx.emit("StorageSold", seat=i, treasures=sorted(seat["storage"]), gems=seat["gems"], gold=gold)
        vp = seat["gold"] // data.GOLD_PER_VP
        if vp:
            ctx.emit("VPScored", seat=i, vp=vp, category="gold")
    ctx.emit("GameEnded", **compute_result(s))


def compute_result(state: State) -> dict[str, Any]:
    """WON-142: most VP; tie -> more completed holds; tie -> higher science power; else shared.
    WON-140: scores are unbounded integers (the board's track loops past 50)."""
    seats = state["seats"]
    keys = {i: (p["vp"], len(p["completed"]), p["science"]) for i, p in enumerate(seats)}
    ranking, ranks = ranks_from_scores(keys)
    # WON-Q14: the tie-break reported is the one that decided first place (WON-142).
    top = max(k[0] for k in keys.values())
    group = [k for k in keys.values() if k[0] == top]
    best = max(group)
    if len(group) == 1:
        tiebreak = "none"
    elif group.count(best) > 1:
        tiebreak = "shared"
    elif sum(k[1] == best[1] for k in group) > 1:
        tiebreak = "science_power"
    else:
        tiebreak = "completed_holds"
    breakdown = {}
    for i, p in enumerate(seats):
        b = dict(p["vp_by"])
        b["total"] = p["vp"]
        b["completed_holds"] = len(p["completed"])
        b["science_power"] = p["science"]
        b["gold_left"] = p["gold"]
        breakdown[str(i)] = b
    return {
        "scores": {str(i): p["vp"] for i, p in enumerate(seats)},
        "ranks": ranks,
        "ranking": ranking,
        "breakdown": breakdown,
        "tiebreak": tiebreak,
    }
