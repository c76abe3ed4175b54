"""What a search needs of Nautilus Industries (``determinize``, ``evaluate``); see ``service/games/base.py``.

Everything is open information (NIN-007): a seat's view is the whole state plus derived numbers, so the one
state consistent with a view is the view without them.  The bag has no order (only counts), so future draws
are not in the state: a search draws them with its own :class:`~service.games.rng.Rng` when it decides.
"""

from __future__ import annotations

from typing import Any

from service.games.base import State, clone_state
from service.games.nautilus_industries import data as D
from service.games.nautilus_industries.scoring import stock_value
from service.games.rng import Rng

#: What ``views.view`` adds to the state (NIN-D01), removed again here.
_DERIVED = ("viewer", "to_act", "multipliers")


def determinize(view: dict[str, Any], seat: int, rng: Rng) -> State:
    """The state behind ``view`` (NIN-007: nothing is hidden, so there is no choice to draw)."""
    state = clone_state(view)
    for key in _DERIVED:
        state.pop(key, None)
    return state


def evaluate(state: State) -> list[float]:
    """Per seat: the final score as if the game ended now (NIN-124: money + stock value), plus the gems held
    at their commodity values (what a sale would bring before the market moves, NIN-095)."""
    out = []
    for seat, player in enumerate(state["players"]):
        value, _ = stock_value(state, seat)
        gems = sum(n * state["commodity"][c] for c, n in player["gems"].items())
        out.append(float(player["money"] + value + D.EVAL_GEM_SHARE * gems))
    return out
