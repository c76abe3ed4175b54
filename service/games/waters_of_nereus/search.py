"""What a search needs of Waters of Nereus (``determinize``, ``evaluate``); see ``service/games/base.py``.

A seat's view hides (``views.py``, section 4 of docs/rules/waters-of-nereus.md): the other seats' science
hands (a count is shown), the crew cards they laid face down this cycle (WON-I01, WON-Q02: only *that* they
chose is shown), the science deck, the discovery stack and its 2 removed cards, and the neutral deck.
``determinize`` deals those from what the view proves is left, uniformly at random:

* science cards: all of them (WON-007) but the seat's own hand and the face-up discard pile (WON-Q09), dealt
  to the other hands by their counts, the rest to the deck (WON-018);
* discovery cards: those of the board side in use (WON-016) not yet flipped (WON-072), split into the stack
  (by its count) and the cards removed at setup (WON-016);
* a face-down crew card: one of that seat's crew cards not yet played this day (WON-044);
* the neutral deck: the crew cards the neutral player has not flipped this day (WON-130, WON-131).
"""

from __future__ import annotations

from typing import Any

from service.games.base import State, clone_state
from service.games.rng import Rng
from service.games.waters_of_nereus import data


def determinize(view: dict[str, Any], seat: int, rng: Rng) -> State:
    """A full state whose view for ``seat`` is ``view``, its hidden parts drawn with ``rng``."""
    state = clone_state(view)
    state.pop("to_act", None)
    seats = state["seats"]
    if "science_deck_count" not in view:
        # A finished game's view hides nothing (docs/games/waters-of-nereus.md "Hidden information").
        for p in seats:
            p.pop("committed", None)
        return state
    known = set(state["science_discard"])
    for p in seats:
        known.update(p.get("hand", ()))
    unknown = rng.shuffled(sorted(set(data.SCIENCE_CARDS) - known))
    for p in seats:
        committed = p.pop("committed")
        if "hand_count" in p:
            count = p.pop("hand_count")
            p["hand"], unknown = unknown[:count], unknown[count:]
        if "chosen" not in p:
            free = [crew for crew in data.CREWS if crew not in p["played"]]
            p["chosen"] = rng.choice(free) if committed else None
    deck_count = state.pop("science_deck_count")
    assert len(unknown) == deck_count, "the view's science card counts do not add up (WON-007)"
    state["science_deck"] = unknown

    side = data.DISCOVERY_SIDE[state["players"]]
    flipped = set(state["discovery_used"]) | {state["discovery_current"]}
    pool = rng.shuffled(sorted(k for k in data.DISCOVERY_CARDS if k.startswith(side) and k not in flipped))
    stack_count = state.pop("discovery_stack_count")
    cut = len(pool) - stack_count
    state["discovery_removed"], state["discovery_stack"] = pool[:cut], pool[cut:]

    neutral_count = state.pop("neutral_deck_count")
    if state["neutral"]:
        state["neutral_deck"] = rng.shuffled([c for c in data.CREWS if c not in state["neutral_played"]])
    else:
        state["neutral_deck"] = []
    assert len(state["neutral_deck"]) == neutral_count, "the view's neutral deck count does not add up (WON-131)"
    return state


def _hold_progress(p: dict[str, Any]) -> float:
    """The VP (WON-083) of unfinished holds in the share of their places the treasures already in them fill,
    before :data:`~service.games.waters_of_nereus.data.EVAL_HOLD_SHARE`."""
    total = 0.0
    for crew, hold in p["holds"].items():
        if crew in p["completed"]:
            continue
        filled = len(hold) - hold.count(None)
        if filled:
            total += data.HOLD_VP[crew] * filled / len(hold)
    return total


def evaluate_components(state: State) -> list[dict[str, float]]:
    """Per seat, the parts :func:`evaluate` adds up, each before its weight: ``scored`` (VP, WON-140, plus
    what the final conversion would add now, WON-141: storage and gems sold at WON-096 prices, 1 VP per 5
    gold, without rounding down; weight 1), ``hold_progress`` (weight ``EVAL_HOLD_SHARE``), ``pending``
    (treasures in hand, weight ``EVAL_PENDING_VP``) and ``science`` (track steps, weight ``EVAL_SCIENCE_VP``)."""
    out = []
    for p in state["seats"]:
        gold = p["gold"] + data.SELL_TREASURE * len(p["storage"]) + data.SELL_GEM * p["gems"]
        out.append(
            {
                "scored": float(p["vp"] + gold / data.GOLD_PER_VP),
                "hold_progress": _hold_progress(p),
                "pending": float(len(p["pending"])),
                "science": float(p["science"]),
            }
        )
    return out


def evaluate(state: State) -> list[float]:
    """Per seat: VP plus the final conversion now, plus shares of unfinished holds, of the treasures still in
    hand and of the science track (:func:`evaluate_components`, weighted)."""
    return [
        c["scored"]
        + data.EVAL_HOLD_SHARE * c["hold_progress"]
        + data.EVAL_PENDING_VP * c["pending"]
        + data.EVAL_SCIENCE_VP * c["science"]
        for c in evaluate_components(state)
    ]
