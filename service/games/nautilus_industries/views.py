"""What each viewer sees.

Everything in Nautilus Industries is open information (NIN-007): money, gems held,
certificates, tiles, tracks and the bag's composition.  Only the seed (and so the order of
future draws) is secret, and it never enters the state.
"""

from __future__ import annotations

from typing import Any

from service.games.base import Event, State, Viewer
from service.games.nautilus_industries import data as D
from service.games.nautilus_industries.legal import to_act


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """The whole state (NIN-007) plus who is to act and each company's multiplier (NIN-D01)."""
    out = dict(state)  # adds top-level keys only; shares the rest (Engine.view)
    out["to_act"] = to_act(state)
    out["multipliers"] = {c: D.MULTIPLIER[state["stock"][c]] for c in D.COLOURS}
    out["viewer"] = viewer
    return out


def redact_event(event: Event, viewer: Viewer) -> Event:
    """Nothing is hidden (NIN-007): every viewer sees every event as it is."""
    return event
