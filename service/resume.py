"""The boards a reconnecting game stream missed (docs/API.md, "Streams").

A game's read model holds only its newest board, so the boards between a
client's ``Last-Event-ID`` and the head are rebuilt from the stream: from the
latest snapshot at or before that version (``QD_SNAPSHOT_EVERY`` events at
most), one board per decision, each built by the projection's own
``render_board_fields``.  At most ``most`` of them (the streams pass the live hub's
``BOARD_HISTORY``, as for a live follower): a client further behind gets the
newest board only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from projections.boards import info_of, render_board_fields
from service.adapters.eventstore import EventStore
from service.domain.pipeline import GAME_CREATED, GAME_FINISHED
from service.domain.records import StoredEvent
from service.domain.replay import fold_stream
from service.games import registry

T = TypeVar("T")


def _as_bytes(fields: dict[str, bytes | str]) -> dict[str, bytes]:
    # What a read of the hash gives (``HMGET``): bytes.
    return {k: v if isinstance(v, bytes) else v.encode() for k, v in fields.items()}


def boards_between(
    store: EventStore, gid: str, after: int, upto: int, shape: Callable[[dict[str, bytes]], T], most: int
) -> list[tuple[int, T]]:
    """``(version, shape(fields))`` of each decision's board with ``after <
    version <= upto``, oldest first; empty when ``upto - after`` is more than
    ``most`` (or nothing was missed)."""
    if upto <= after or upto - after > most:
        return []
    opening = store.read(gid, after=0, upto=1)
    if not opening or opening[0].type != GAME_CREATED:
        return []
    created = opening[0]
    info = info_of(gid, created.data, created.meta.get("received_at"))
    engine = registry.get(info["game"], info["rules_version"])
    snap = store.latest_snapshot(gid, upto=after)
    start, state = snap if snap is not None else (0, None)
    events = store.read(gid, after=start, upto=upto)
    state = fold_stream(engine, [e for e in events if e.seq <= after], state)
    missed = [e for e in events if e.seq > after]
    out: list[tuple[int, T]] = []
    finished = False
    for i, event in enumerate(missed):
        state = fold_stream(engine, [event], state)
        finished = finished or event.type == GAME_FINISHED
        if not _ends_decision(missed, i):
            continue
        assert state is not None  # folded from the opening at least
        fields = render_board_fields(
            engine,
            info,
            state,
            event.seq,
            finished,
            result=event.data.get("result") if event.type == GAME_FINISHED else None,
            clock=event.meta.get("clock"),
        )
        out.append((event.seq, shape(_as_bytes(fields))))
    return out


def _ends_decision(events: list[StoredEvent], i: int) -> bool:
    """A decision's events share one meta (``pipeline.seal``): the board a
    projection can have written is the one after a decision's last event."""
    return i == len(events) - 1 or events[i + 1].meta != events[i].meta
