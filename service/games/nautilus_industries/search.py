"""What a search needs of Nautilus Industries (``determinize``, ``evaluate``); see ``service/games/base.py``.

Everything is open information (NIN-007): a seat's view is the whole state plus derived numbers, so the one
state consistent with a view is the view without them.  The bag has no order (only counts), so future draws
are not in the state: a search draws them with its own :class:`~service.games.rng.Rng` when it decides.
"""

from __future__ import annotations

from typing import Any

from service.games.base import State, clone_state
from service.games.nautilus_industries import data as D
from service.games.rng import Rng

#: What ``views.view`` adds to the state (NIN-D01), removed again here.
_DERIVED = ("viewer", "to_act", "multipliers")


def determinize(view: dict[str, Any], seat: int, rng: Rng) -> State:
    """The state behind ``view`` (NIN-007: nothing is hidden, so there is no choice to draw)."""
    state = clone_state(view)
    for key in _DERIVED:
        state.pop(key, None)
    return state


def _projected_multipliers(state: State) -> dict[str, int]:
    """Heuristic multipliers the companies' certificates will end at: each stock marker moved on by a share
    of the leader's distance to the end space (NIN-120), read off NIN-D01."""
    stock = state["stock"]
    ahead = round(D.EVAL_STOCK_PROGRESS * (D.STOCK_END - max(stock.values())))
    return {c: D.MULTIPLIER[min(stock[c] + ahead, D.STOCK_END)] for c in D.COLOURS}


def _sub_yield(state: State, seat: int) -> float:
    """The commodity value of what the seat's placed subs will collect at the market (NIN-091, NIN-092): up to
    2 gems of its own colour and 1 of its upgrade colour from its tile."""
    total = 0.0
    value = state["commodity"]
    for tile in state["tiles"]:
        for colour, owner in tile["subs"].items():
            if owner != seat:
                continue
            total += min(2, tile["gems"][colour]) * value[colour]
            upgrade = tile["upgrades"][colour]
            if upgrade is not None and tile["gems"][upgrade] > (2 if upgrade == colour else 0):
                total += value[upgrade]
    return total


def evaluate(state: State) -> list[float]:
    """Per seat: money plus certificates (NIN-124), the certificates at a projected multiplier while the
    tracks are open, plus the gems held and those the seat's subs will collect, at a share of their commodity
    values (a sale moves the market before it pays, NIN-095, NIN-097)."""
    if state["locked"] or state["result"] is not None:
        multipliers = {c: D.MULTIPLIER[state["stock"][c]] for c in D.COLOURS}
    else:
        multipliers = _projected_multipliers(state)
    stock = [0] * state["n"]
    for company in D.COLOURS:
        multiplier = multipliers[company]
        for share, owner in zip(D.SHARES, state["certs"][company], strict=True):
            if owner is not None:
                stock[owner] += share * multiplier
    value = state["commodity"]
    out = []
    for seat, player in enumerate(state["players"]):
        gems = sum(n * value[c] for c, n in player["gems"].items()) + _sub_yield(state, seat)
        out.append(float(player["money"] + stock[seat] + D.EVAL_GEM_SHARE * gems))
    return out
