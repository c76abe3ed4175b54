"""What organisers and players read of a stream: the events feed's redaction
and time travel (the state after any number of events).  Reads PostgreSQL
only; access control is the caller's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.adapters.eventstore import EventStore
from service.domain import canonical, clocks
from service.domain.errors import Conflicting, Refused, game_not_found
from service.domain.pipeline import GAME_FINISHED, PLATFORM_EVENTS, shown_result
from service.domain.records import StoredEvent
from service.domain.replay import fold_stream
from service.games import registry
from service.games.base import ADMIN, Engine, Event, Viewer


def feed_line(engine: Engine, e: StoredEvent, viewer: Viewer, reveal_all: bool) -> dict[str, Any]:
    """One line of the events feed as ``viewer`` may see it.

    ``reveal_all`` (organiser, or the game has finished) shows everything.
    Otherwise ``data`` is what ``engine.redact_event`` leaves for ``viewer``
    and ``meta.intent`` is dropped unless the viewer's own seat sent it (and
    ``meta.seat`` too when the event's data was redacted).  The
    digests, ``prev_hash`` and ``hash`` are always those of the full event: the hash
    covers the digests, not the data, so every link still checks."""
    line = e.to_json()
    line["redacted"] = False
    if reveal_all or viewer == ADMIN:
        return line
    data_hidden = False
    if e.type not in PLATFORM_EVENTS:
        shown = engine.redact_event(Event(e.type, e.data), viewer).data
        if shown is not e.data and canonical.canonical(shown) != canonical.canonical(e.data):
            line["data"] = shown
            line["redacted"] = data_hidden = True
    if e.meta.get("seat") != viewer:
        # Another seat's intent is theirs alone; and when the event itself
        # hides something (a secret crew choice), so is the fact that it was
        # that seat who acted.
        hidden = {"intent", "seat"} if data_hidden else {"intent"}
        if any(e.meta.get(k) is not None for k in hidden):
            line["meta"] = {k: v for k, v in e.meta.items() if k not in hidden}
            line["redacted"] = True
    return line


def is_finished(events: Sequence[StoredEvent]) -> bool:
    return any(e.type == GAME_FINISHED for e in events)


def stream_finished(store: EventStore, game_id: str) -> bool:
    """Whether the game's stream is closed (its last event is GameFinished)."""
    head = store.version(game_id)
    return head > 0 and any(e.type == GAME_FINISHED for e in store.read(game_id, after=head - 1))


def state_at(store: EventStore, game_id: str, version: int | None, seat: int | None) -> dict[str, Any]:
    """The state and views after the first ``version`` events, rebuilt from
    the stream alone with the rules version the game was created with.
    Access control is the caller's job."""
    record = store.game(game_id)
    if record is None:
        raise game_not_found()
    head = store.version(game_id)
    version = head if version is None else version
    if not 1 <= version <= head:
        raise Refused("invalid_version", f"version must be between 1 and {head}.", {"head": head})
    try:
        engine = registry.get(record.game, record.rules_version)
    except registry.RulesVersionUnavailable as exc:
        raise Conflicting("rules_version_unavailable", str(exc), {"rules_version": record.rules_version}) from None
    if seat is not None and not 0 <= seat < len(record.players):
        raise Refused("invalid_seat", f"seat must be between 0 and {len(record.players) - 1}.")
    # From the latest snapshot at or before the version (QD_SNAPSHOT_EVERY events at most
    # to fold), never the whole stream in memory: a 15,000-event game's was tens of MB.
    snap = store.latest_snapshot(game_id, upto=version)
    start, state = snap if snap is not None else (0, None)
    events = store.read(game_id, after=start, upto=version)
    state = fold_stream(engine, events, state)
    last = events[-1] if events else store.read(game_id, after=version - 1, upto=version)[0]
    opening = events[0] if start == 0 else store.read(game_id, after=0, upto=1)[0]
    # GameFinished closes a stream: only the last event can be it.
    finished_at_version = last.type == GAME_FINISHED
    result = engine.result(state) if state is not None else None
    if finished_at_version:
        # The platform's result: forfeited seats last, or an abort (service/domain/pipeline.py).
        result = shown_result(last.data.get("result"))
    return {
        "id": game_id,
        "game": record.game,
        "rules_version": record.rules_version,
        "players": list(record.players),
        "version": version,
        "head": head,
        "hash": last.hash,
        "last_event": {"seq": last.seq, "type": last.type},
        "finished": finished_at_version,
        "to_act": [] if state is None or result is not None else engine.to_act(state),
        "clock": clocks.public(opening.data.get("clock"), last.meta.get("clock")),
        "result": result,
        "seat": seat,
        "view": None if state is None else engine.view(state, seat),
        "state": state,
    }
