"""What each viewer may see (``view``) and the events as they may see them (``redact_event``).

Hidden (section 4 of docs/rules/waters-of-nereus.md): science hands (owner only; others see a
count), the crew card chosen in stage 1 before the reveal (owner only, WON-I01), the science
deck order and contents, the discovery stack order and the 2 removed cards, the neutral deck
order (nobody but ADMIN).  Everything else is open information, the science discard pile
included (WON-Q09).  The bag has no order: a draw is an rng choice made when it happens
(WON-I04), so only its public counts exist.
"""

from __future__ import annotations

from typing import Any

from service.games.base import ADMIN, Event, State, Viewer
from service.games.waters_of_nereus.legal import to_act


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    # New dicts where keys are added or removed, the rest shared with the state (Engine.view).
    v = dict(state)
    v["to_act"] = to_act(state)
    # WON-Q02: who has laid a crew card face down is public (what it is is not).
    v["seats"] = [p | {"committed": p["chosen"] is not None} for p in state["seats"]]
    if viewer == ADMIN or state["result"] is not None:
        # docs/games/waters-of-nereus.md "Hidden information": once the game has
        # finished, everyone sees everything.
        return v
    v["science_deck_count"] = len(v.pop("science_deck"))
    v["discovery_stack_count"] = len(v.pop("discovery_stack"))
    v.pop("discovery_removed")
    v["neutral_deck_count"] = len(v.pop("neutral_deck"))
    for i, seat in enumerate(v["seats"]):
        if viewer != i:
            seat["hand_count"] = len(seat.pop("hand"))
            seat.pop("chosen")
    return v


def redact_event(event: Event, viewer: Viewer) -> Event:
    if viewer == ADMIN:
        return event
    t = event.type
    d = event.data
    # Redaction keeps the event's shape: hidden cards become None placeholders.
    if t == "DiscoveryStackShuffled":
        return Event(t, {"stack": [None] * len(d["stack"]), "removed": [None] * len(d["removed"])})
    if t in ("ScienceDeckShuffled", "NeutralDeckShuffled"):
        return Event(t, {"deck": [None] * len(d["deck"])})
    if t == "ScienceCardsDealt" and viewer != d["seat"]:
        return Event(t, {"seat": d["seat"], "cards": [None] * len(d["cards"])})
    if t == "ScienceCardDrawn" and viewer != d["seat"]:
        return Event(t, {"seat": d["seat"], "card": None})
    if t == "CrewChosen" and viewer != d["seat"]:
        # WON-040, WON-Q02: who chose is public, the card is not (until the reveal).
        return Event(t, {"seat": d["seat"], "crew": None})
    return event
