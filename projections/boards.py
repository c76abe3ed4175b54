"""Board read models: per-seat views, legal intents, to_act, status, result.

Everything written for a game is a pure function of its events, serialised
canonically, so a live projection and a rebuild give identical bytes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from service.domain import clocks
from service.domain.pipeline import GAME_CREATED, GAME_FINISHED
from service.domain.records import StoredEvent
from service.games.base import ADMIN, Engine, State


def dumps(obj: Any) -> bytes:
    """Canonical bytes of a read-model value (sorted keys, compact UTF-8).
    orjson: the projection serialises every view on every event, and the
    standard library's encoder was most of a projection's cost."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def info_from(events: list[StoredEvent], info: dict[str, Any] | None) -> dict[str, Any] | None:
    """The game's identity, taken from its opening event."""
    for e in events:
        if e.type == GAME_CREATED:
            return info_of(e.game_id, e.data, e.meta.get("received_at"))
    return info


def info_of(game_id: str, created: dict[str, Any], received_at: str | None) -> dict[str, Any]:
    """The game's identity from its opening event's data."""
    at = received_at or ""
    info = {
        "id": game_id,
        "game": created["game"],
        "rules_version": created["rules_version"],
        "players": created["players"],
        "options": created["options"],
        "seed_commitment": created["seed_commitment"],
        "created_at": at,
        "created_ms": _ms(at),
    }
    # Who sits where, who organises, rated or casual: only where the opening
    # records them (games before accounts have none: casual, seated by name).
    info.update({k: created[k] for k in ACCESS_TERMS if k in created})
    if "clock" in created:
        info["clock"] = created["clock"]  # the time control (service/domain/clocks.py)
    return info


#: The terms of ``GameCreated`` a reader needs to tell who is calling (and, for
#: ``table`` and ``tournament``, what to tell its players when it starts).
ACCESS_TERMS = ("rated", "accounts", "created_by", "table", "tournament")


def _ms(iso: str) -> int:
    if not iso:
        return 0
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def render_board_fields(
    engine: Engine,
    info: dict[str, Any],
    state: State,
    version: int,
    finished: bool,
    *,
    result: dict[str, Any] | None = None,
    clock: dict[str, Any] | None = None,
) -> dict[str, bytes | str]:
    """Every field of the game's hash.  ``result``: the platform's, from ``GameFinished``
    (forfeited seats last; an abort); ``clock``: the clock recorded with the event at
    ``version`` (``meta.clock``), shown as of that version."""
    # Views and legal lists come from the canonical (key-sorted) state: engines
    # iterate dicts in insertion order, which differs between a state folded
    # from scratch (rebuild) and one read back from the JSON checkpoint (live),
    # and the read model must not depend on which path built it.
    canonical_state = dumps(state)
    state = orjson.loads(canonical_state)
    if not finished:
        result = None
    elif result is None:
        result = engine.result(state)  # a caller that did not pass the closing event's
    to_act = [] if finished else engine.to_act(state)
    fields: dict[str, bytes | str] = {
        "version": str(version),
        "info": dumps(info),
        "status": "finished" if finished else "active",
        "to_act": dumps(to_act),
        "result": dumps(result),
        "clock": dumps(clocks.public(info.get("clock"), clock)),
        # The same bytes as dumping ``state`` again (it is that text, parsed), once.
        "state": canonical_state,
        "view:public": dumps(engine.view(state, None)),
        "view:admin": dumps(engine.view(state, ADMIN)),
    }
    for seat in range(len(info["players"])):
        fields[f"view:{seat}"] = dumps(engine.view(state, seat))
        legal = engine.legal(state, seat) if seat in to_act else []
        fields[f"legal:{seat}"] = dumps([c.to_json() for c in legal])
    return fields


def stream_terms(events: list[StoredEvent]) -> dict[str, Any]:
    """What :func:`render_board_fields` takes from a stream besides the state (the keyword arguments
    of a rebuild from stored events): the closing event's result, and the clock recorded with
    the last event."""
    last = events[-1] if events else None
    if last is None:
        return {"result": None, "clock": None}
    result = last.data.get("result") if last.type == GAME_FINISHED else None
    return {"result": result, "clock": last.meta.get("clock")}


def is_finished(events: list[StoredEvent], already: bool) -> bool:
    return already or any(e.type == GAME_FINISHED for e in events)
