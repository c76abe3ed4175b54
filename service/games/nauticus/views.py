"""What viewers see.  Nauticus has no hidden information (NAU-005), so nothing is ever hidden or redacted."""

from __future__ import annotations

from typing import Any

from service.games.base import Event, State, Viewer
from service.games.nauticus.data import PRICES, SPACES
from service.games.nauticus.scoring import crowns
from service.games.nauticus.state import turntable_blue


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """NAU-005: every viewer (a seat, a spectator or the organiser) sees the whole state, plus the derived
    numbers a client needs: blue workers (NAU-040) and prices (NAU-052) per space, crowns per player (NAU-140).
    The seed is never part of the state, so later layouts cannot be foreseen."""
    # New dicts where keys are added, the rest shared with the state (Engine.view).
    out = dict(state)
    out["viewer"] = viewer
    anchor = state["turntable_anchor"]
    out["blue_by_space"] = [turntable_blue(anchor, sp) for sp in range(SPACES)]
    out["prices_by_space"] = [list(p) for p in PRICES]
    out["seats"] = [seat | {"crowns": crowns(seat)} for seat in state["seats"]]
    return out


def redact_event(event: Event, viewer: Viewer) -> Event:
    """NAU-005: nothing is hidden; the layout draw is public once the tiles are laid out."""
    return event
