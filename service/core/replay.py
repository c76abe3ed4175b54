"""Folding a stored stream back into engine state (no infrastructure).

A stream is ``GameCreated`` (platform), the engine's events, and at the end
``GameFinished`` (platform).  Only the engine's events are folded.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.core.pipeline import PLATFORM_EVENTS
from service.core.records import FoldRow, StoredEvent
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
