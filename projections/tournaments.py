"""The tournaments' read model: each tournament's summary, rounds and standings
in Redis (docs/TOURNAMENTS.md "Standings read model").

One hash per tournament, ``t:{<id>}`` (the id in a hash tag, like a game's):
``version`` (the checkpoint: the last event folded), ``state`` (the folded
state), ``tournament`` (``GET /v1/tournaments/{id}``), ``round:<n>`` and
``standings:<n>`` for every round paired, and ``standings`` (the latest).
Every field is a function of the stream alone, written in canonical JSON
(sorted keys, no spaces), so a live fold and ``make rebuild`` give the same
bytes.

The checkpoint moves with the views in one ``MULTI`` under a ``WATCH`` of the
hash, as a game's board does (``projections/runner.py``): two jobs racing on
one tournament cannot both win, and a late or duplicated job changes nothing.
The worker projects a tournament after each of its commits
(``workers/tournaments.py``); the sweep, a global consumer, catches up any
that lag through the tournaments' own commit-ordered feed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, cast

import orjson
import redis
from redis.typing import EncodableT, FieldT

from service import redis_roles
from service.adapters.eventstore import EventStore, StoreUnavailable
from service.adapters.tournament_store import TournamentStore
from service.domain.records import START, Cursor, StoredEvent
from service.tournaments import events as tevents
from service.tournaments import standings as tstandings
from service.tournaments.evolve import State, evolve, is_bot

#: The sweep's cursor in the tournaments' feed.
CURSOR = "tournaments:cursor"
_PATTERN = "t:{*}"
log = logging.getLogger(__name__)
#: What a catch-up reads of the hash before folding.
_CURRENT = ("version", "state", "created_at")


def key(tournament_id: str) -> str:
    return f"t:{{{tournament_id}}}"


def dumps(obj: Any) -> str:
    """Canonical JSON text: the same bytes for the same value, live or rebuilt."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# -- the views: pure functions of the state --------------------------------------
def table_status(table: dict[str, Any]) -> str:
    if table["result"] is not None:
        return "finished"
    return "waiting" if table["game_id"] is None else "playing"


def round_view(state: State, n: int) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}/rounds/{n}``: the tables in order, each with its
    players in seat order."""
    rnd = state["history"][n - 1]
    tables = [
        {
            "table": t["table"],
            "game_id": t["game_id"],
            "players": list(t["players"]),
            "bots": [seat for seat, p in enumerate(t["players"]) if is_bot(state, p)],
            "status": table_status(t),
            "result": t["result"],
        }
        for t in rnd["tables"]
    ]
    return {
        "round": n,
        "status": "finished" if all(t["status"] == "finished" for t in tables) else "playing",
        "tables": tables,
        "byes": list(rnd["byes"]),
    }


def summary(tournament_id: str, state: State, version: int, created_at: str | None) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}`` (and the answer of every command)."""
    return {
        "id": tournament_id,
        "name": state["name"],
        "game": state["game"],
        "status": state["status"],
        "format": state["format"],
        "round": len(state["history"]),
        "rounds": state["rounds"],
        "table_size": state["table_size"],
        "table_sizes": list(state["table_sizes"]),
        "clock": state["clock"],
        "rated": state["rated"],
        "points": state["points"],
        "organiser": state["organiser"],
        "players": list(state["players"]),
        "lot": list(state["lot"]),
        "seed_commitment": state["seed_commitment"],
        "seed": state["seed"],
        "pairing": state["pairing"],
        "created_at": created_at,
        "version": version,
        "late_until_round": state.get("late_until_round"),
        "late": list(state.get("late", [])),
        "withdrawals": list(state.get("withdrawals", [])),
        "aborted": state.get("aborted"),
        "bye_bot": state.get("bye_bot"),
    }


def fields_of(tournament_id: str, state: State, version: int, created_at: str | None) -> dict[FieldT, EncodableT]:
    """Every field of the hash for ``state`` at ``version``."""
    fields: dict[FieldT, EncodableT] = {
        "version": str(version),
        "state": dumps(state),
        "created_at": created_at or "",
        "tournament": dumps(summary(tournament_id, state, version, created_at)),
    }
    latest = None
    for rnd in state["history"]:
        n = rnd["round"]
        fields[f"round:{n}"] = dumps(round_view(state, n))
        latest = fields[f"standings:{n}"] = dumps(tstandings.standings_json(state, n))
    fields["standings"] = latest or dumps(tstandings.standings_json(state, 0))
    return fields


# -- writing ----------------------------------------------------------------------
def catch_up(r: redis.Redis, store: TournamentStore, tournament_id: str, retries: int = 8) -> int:
    """Fold the events after the checkpoint into the read model; returns the
    version it reflects afterwards."""
    name = key(tournament_id)
    for _ in range(retries):
        with r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(name)
                # The client does not decode responses: a field is bytes, or None when missing.
                raw = cast(list[bytes | None], pipe.hmget(name, *_CURRENT))
                raw_version, raw_state, raw_created = raw
                version = int(raw_version or 0)
                new = store.read(tournament_id, after=version)
                if not new:
                    pipe.unwatch()
                    return version
                state, created_at = _fold(raw_state, raw_created, new)
                pipe.multi()
                pipe.hset(name, mapping=fields_of(tournament_id, state, new[-1].seq, created_at))
                # Sharded on a cluster: the channel shares the hash's slot, as a transaction needs.
                announce = "SPUBLISH" if redis_roles.is_cluster(r) else "PUBLISH"
                pipe.execute_command(announce, f"{name}:changed", str(new[-1].seq))
                pipe.execute()
                return new[-1].seq
            except redis.WatchError:
                continue
    return int(r.hget(name, "version") or 0)


def _fold(raw_state: bytes | None, raw_created: bytes | None, new: list[StoredEvent]) -> tuple[State, str | None]:
    state: State | None = orjson.loads(raw_state) if raw_state else None
    created_at = raw_created.decode() if raw_created else None
    for e in new:
        if e.seq == 1:
            created_at = e.meta.get("received_at")
        state = evolve(state, tevents.parse(e.type, e.data))
    assert state is not None
    return state, created_at


def consume(
    r: redis.Redis,
    store: EventStore,
    rebuild: bool = False,
    progress: Callable[[str], None] | None = None,
    *,
    tstore: TournamentStore,
) -> int:
    """The global consumer (``service.bootstrap.global_projections``, which binds
    ``tstore``): catch up every tournament whose stream moved since the cursor;
    with ``rebuild``, drop every tournament's read model and fold each from its
    whole stream."""
    if rebuild:
        return _rebuild(r, tstore, progress)
    caught = sweep(r, tstore)
    if progress and caught:
        progress(f"tournaments: {caught} caught up")
    return caught


def sweep(r: redis.Redis, store: TournamentStore, batch: int = 1000) -> int:
    """Catch up every tournament touched in the feed after the cursor, then move it."""
    raw = r.get(CURSOR)
    cursor: Cursor = tuple(json.loads(raw)) if raw else START
    caught = 0
    while rows := store.feed_positions(after=cursor, limit=batch):
        for tid in dict.fromkeys(t for _, t, _ in rows):
            try:
                catch_up(r, store, tid)
                caught += 1
            except (redis.ConnectionError, redis.TimeoutError, StoreUnavailable):
                raise  # a server away: the next sweep starts from this cursor again
            except Exception:  # one broken stream must not stop the others; its audit says why
                log.exception("tournament %s could not be projected", tid)
        cursor = rows[-1][0]
        r.set(CURSOR, json.dumps(list(cursor)))
        if len(rows) < batch:
            break
    return caught


def _rebuild(r: redis.Redis, store: TournamentStore, progress: Callable[[str], None] | None) -> int:
    for k in list(r.scan_iter(match=_PATTERN, count=1000)):
        r.delete(k)
    r.delete(CURSOR)
    done = 0
    after = None
    while page := store.ids(after=after):
        for tid in page:
            catch_up(r, store, tid)
            done += 1
        after = page[-1]
    sweep(r, store)  # the cursor to the feed's end, so the next sweep does not fold everything again
    if progress:
        progress(f"tournaments: {done} rebuilt")
    return done


# -- reading (the query side) --------------------------------------------------------
def read(r: redis.Redis, tournament_id: str, field: str) -> Any | None:
    """One field of the read model, parsed; ``None`` if absent."""
    raw = r.hget(key(tournament_id), field)
    return None if raw is None else orjson.loads(raw)
