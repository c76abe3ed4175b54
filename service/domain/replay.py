"""Folding a stored stream back into engine state (no infrastructure).

A stream is ``GameCreated`` (platform), the engine's events, and at the end
``GameFinished`` (platform).  Only the engine's events are folded.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.domain.pipeline import PLATFORM_EVENTS
from service.domain.records import FoldBatch, StoredEvent
from service.games.base import Engine, Event, State


def fold_stream(engine: Engine, events: Iterable[StoredEvent], state: State | None = None) -> State | None:
    evolve = engine.evolve
    for e in events:
        if e.type not in PLATFORM_EVENTS:
            state = evolve(state, Event(e.type, e.data))
    return state


def fold_batch(engine: Engine, batch: FoldBatch, state: State | None = None) -> State | None:
    """:func:`fold_stream` for what a projection reads (``read_for_fold``)."""
    evolve = engine.evolve
    for type_, data in zip(batch.types, batch.datas, strict=True):
        if type_ not in PLATFORM_EVENTS:
            state = evolve(state, Event(type_, data))
    return state
