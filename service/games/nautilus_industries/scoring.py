"""Final scoring (rulebook "Game End"; NIN-124, NIN-125) and the stored result.

``final_result`` is computed once, by ``rules`` after the final sale (NIN-123), and stored
in the ``GameEnded`` event; ``result`` returns that stored value.
"""

from __future__ import annotations

from typing import Any

from service.games.base import State, ranks_from_scores
from service.games.nautilus_industries import data as D


def stock_value(state: State, seat: int) -> tuple[int, dict[str, Any]]:
    """Σ over the seat's certificates of share count × the company's multiplier (NIN-124, NIN-D01)."""
    total = 0
    per_company: dict[str, Any] = {}
    for company in D.COLOURS:
        shares = sum(s for s, owner in zip(D.SHARES, state["certs"][company], strict=True) if owner == seat)
        multiplier = D.MULTIPLIER[state["stock"][company]]
        value = shares * multiplier
        per_company[company] = {"shares": shares, "space": state["stock"][company], "multiplier": multiplier}
        per_company[company]["value"] = value
        total += value
    return total, per_company


def final_result(state: State) -> dict[str, Any]:
    """The result of a finished game, computed after the final sale (NIN-123):
    score = money + stock value (NIN-124); highest wins, ties share the win (NIN-125)."""
    scores: dict[str, int] = {}
    breakdown: dict[str, Any] = {}
    keys: dict[int, tuple[Any, ...]] = {}
    for seat in range(state["n"]):
        money = state["players"][seat]["money"]
        value, per_company = stock_value(state, seat)
        score = money + value
        scores[str(seat)] = score
        breakdown[str(seat)] = {"money": money, "stock_value": value, "stocks": per_company}
        keys[seat] = (score,)
    ranking, ranks = ranks_from_scores(keys)
    shared = list(ranks.values()).count(1) > 1
    return {
        "scores": scores,
        "ranks": ranks,
        "ranking": ranking,
        "breakdown": breakdown,
        # NIN-125: the rulebook has no tie-break; equal scores share the rank (and the win).
        "tiebreak": "none: a tie is a shared victory (NIN-125)" if shared else None,
    }


def result(state: State) -> dict[str, Any] | None:
    """The stored result: None while the game runs (the engine template copies it)."""
    return state["result"]
