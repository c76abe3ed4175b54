"""From what the API gives a seat to what a search works on, and back.

A bot receives exactly what a client of its seat reads: the body of ``GET /v1/games/{id}`` (or only its
``view``) and the intents of ``GET /v1/games/{id}/legal`` (the body or only its ``intents``).  It never gets
the engine's state: every state it searches is drawn by the engine's ``determinize`` from the seat's view.
"""

from __future__ import annotations

import json
import random
from typing import Any

from service.games.base import Command, Engine, State, clone_state
from service.games.rng import Rng

#: Platform intents a bot never chooses while any other intent is legal.
NEVER_CHOSEN = frozenset({"resign"})


def seat_view(view: dict[str, Any]) -> dict[str, Any]:
    """The engine's view of the seat: ``view`` itself, or the ``view`` of a ``GET /v1/games/{id}`` body."""
    inner = view.get("view")
    if isinstance(inner, dict) and "game" in view:
        return inner
    return view


def candidates(legal: list[dict[str, Any]] | dict[str, Any]) -> list[dict[str, Any]]:
    """The intents a bot chooses among: ``legal`` (a list, or a ``/legal`` body), without a resignation
    unless nothing else is legal."""
    intents = legal["intents"] if isinstance(legal, dict) else legal
    kept = [i for i in intents if i.get("type") not in NEVER_CHOSEN]
    return kept or list(intents)


def intent_key(intent: dict[str, Any]) -> str:
    """One spelling of an intent, whatever the order of its fields."""
    return json.dumps(intent, sort_keys=True, separators=(",", ":"))


def new_rng(rnd: random.Random) -> Rng:
    """An engine :class:`Rng` for a search's own draws (determinizations, chance in ``decide``), seeded from
    the bot's seeded generator so the search repeats."""
    return Rng(rnd.getrandbits(256).to_bytes(32, "big"))


def legal_by_key(engine: Engine, state: State, seat: int) -> dict[str, Command]:
    """The seat's legal commands in ``state``, by :func:`intent_key` of their wire form."""
    return {intent_key(c.to_json()): c for c in engine.legal(state, seat)}


def apply(engine: Engine, state: State, seat: int, command: Command, rng: Rng) -> State:
    """``state`` after ``seat`` sends ``command``: the engine's ``play`` (``state`` may be changed, only
    the returned state counts)."""
    return engine.play(state, seat, command, rng)


def after(engine: Engine, state: State, seat: int, command: Command, rng: Rng) -> State:
    """A new state: ``state`` (left as it is) after ``seat`` sends ``command``."""
    return apply(engine, clone_state(state), seat, command, rng)


def margin(values: list[float], seat: int) -> float:
    """How far ``seat`` leads the best other seat by ``values`` (negative: behind)."""
    others = [v for i, v in enumerate(values) if i != seat]
    return values[seat] - (max(others) if others else 0.0)
