"""Folding a stored stream back into engine state (no infrastructure).

A stream is ``GameCreated`` (platform), the engine's events, and at the end
``GameFinished`` (platform).  Only the engine's events are folded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from service.eventstore import GAME_CREATED, GAME_FINISHED, PLATFORM_EVENTS, FoldRow, StoredEvent
from service.games.base import Engine, Event, State


def fold_stream(engine: Engine, events: Iterable[StoredEvent], state: State | None = None) -> State | None:
    evolve = engine.evolve
    for e in events:
        if e.type not in PLATFORM_EVENTS:
            state = evolve(state, Event(e.type, e.data))
    return state


def fold_rows(engine: Engine, rows: Iterable[FoldRow], state: State | None = None) -> State | None:
    """:func:`fold_stream` for the rows a projection reads (``read_for_fold``)."""
    evolve = engine.evolve
    for _, type_, data in rows:
        if type_ not in PLATFORM_EVENTS:
            state = evolve(state, Event(type_, data))
    return state


def created_data(players: list[str], game: str, rules_version: str, options: dict[str, Any], commitment: str):
    """The opening event's data: everything public about the game's identity."""
    return {
        "game": game,
        "rules_version": rules_version,
        "players": list(players),
        "options": dict(options),
        "seed_commitment": commitment,
    }


def finished_data(result: dict[str, Any], seed: bytes, head_hash: str) -> dict[str, Any]:
    """The closing event's data: the result, the revealed seed, and the hash
    of the event before it (the head of the chain it closes)."""
    return {"result": result, "seed": seed.hex(), "head_hash": head_hash}


__all__ = ["GAME_CREATED", "GAME_FINISHED", "created_data", "finished_data", "fold_rows", "fold_stream"]
