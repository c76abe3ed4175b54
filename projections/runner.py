"""Running projections: catch one game up, sweep for laggards, rebuild all.

The checkpoint of a game's board projection is the ``version`` field of its
hash; it is written by the same ``HSET`` as the views, inside a
``WATCH``/``MULTI`` on that hash.  Two jobs racing on one game cannot both
win, a job that finds nothing new does nothing, and a late or duplicated job
is harmless: the projection is idempotent and order-safe.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import redis
from prometheus_client import Histogram

from projections import keys
from projections.boards import board_fields, dumps, info_from, is_finished
from service.eventstore import START, Cursor, EventStore, StoredEvent, StoreUnavailable
from service.games import registry
from service.replay import fold_stream

log = logging.getLogger(__name__)

LAG = Histogram(
    "qd_projection_lag_seconds",
    "From an intent's arrival to its events being visible in the read model",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)

#: Hooks called (inside the same MULTI) when a game's read model is written:
#: ``hook(pipe, info, fields, finished_now)``.  Game lists register here.
WriteHook = Callable[[Any, dict[str, Any], dict[str, str], bool], None]
_hooks: list[WriteHook] = []


def on_write(hook: WriteHook) -> WriteHook:
    _hooks.append(hook)
    return hook


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _created_us(info: dict[str, Any]) -> int:
    """Creation time in whole microseconds (exact in a sorted-set score, a
    double, until the year 2255).  Milliseconds (``created_ms``) let games
    created in the same millisecond on different API workers list in id
    order instead of newest first."""
    created = info.get("created_at") or ""
    if not created:
        return int(info.get("created_ms") or 0) * 1000
    return (datetime.fromisoformat(created.replace("Z", "+00:00")) - _EPOCH) // timedelta(microseconds=1)


def _index_game(pipe: Any, info: dict[str, Any], fields: dict[str, str], finished_now: bool) -> None:
    """Game lists: newest first, by game type, status and player."""
    gid, score = info["id"], _created_us(info)
    pipe.zadd(keys.GAMES_ALL, {gid: score})
    pipe.zadd(keys.games_by("game", info["game"]), {gid: score})
    for player in info["players"]:
        pipe.zadd(keys.games_by("player", player), {gid: score})
    status = fields["status"]
    other = "active" if status == "finished" else "finished"
    pipe.zrem(keys.games_by("status", other), gid)
    pipe.zadd(keys.games_by("status", status), {gid: score})


on_write(_index_game)


def project_game(
    r: redis.Redis, store: EventStore, game_id: str, retries: int = 8, stream: list[StoredEvent] | None = None
) -> int:
    """Fold the events after the game's checkpoint into its read model.
    Returns the version the read model reflects afterwards.  ``stream``: the
    game's events already read (a rebuild prefetches them); only those after
    the checkpoint are folded, later ones are left to the next job."""
    key = keys.game(game_id)
    for _ in range(retries):
        with r.pipeline() as pipe:
            try:
                pipe.watch(key)
                raw_version, raw_state, raw_info, status = pipe.hmget(key, "version", "state", "info", "status")
                version = int(raw_version or 0)
                if stream is None:
                    events = store.read_for_fold(game_id, after=version)
                else:
                    events = [e for e in stream if e.seq > version]
                if not events:
                    pipe.unwatch()
                    return version
                info = info_from(events, orjson.loads(raw_info) if raw_info else None)
                if info is None:
                    raise RuntimeError(f"game {game_id}: stream has no opening event")
                fields = _fold(info, raw_state, events, status == b"finished")
                if raw_info is None:
                    # Seat token hashes, so queries can tell seats apart
                    # without asking PostgreSQL.
                    fields["auth"] = dumps([h.hex() for h in store.secrets(game_id)[1]])
                pipe.multi()
                pipe.hset(key, mapping=fields)
                for hook in _hooks:
                    hook(pipe, info, fields, fields["status"] == "finished" and status != b"finished")
                pipe.execute()
                _observe_lag(events[-1])
                return events[-1].seq
            except redis.WatchError:
                continue
    # Someone else keeps writing newer versions; they will have caught up.
    return int(r.hget(key, "version") or 0)


def _observe_lag(event: StoredEvent) -> None:
    received = event.meta.get("received_at")
    if received:
        lag = time.time() - datetime.fromisoformat(received.replace("Z", "+00:00")).timestamp()
        LAG.observe(max(lag, 0.0))


def _fold(info: dict[str, Any], raw_state: bytes | None, events: list[StoredEvent], finished: bool) -> dict[str, str]:
    engine = registry.get(info["game"], info["rules_version"])
    state = orjson.loads(raw_state) if raw_state else None
    state = fold_stream(engine, events, state)
    return board_fields(engine, info, state, events[-1].seq, is_finished(events, finished))


def rebuild_game(r: redis.Redis, store: EventStore, game_id: str) -> int:
    """Drop and rebuild one game's read model from its whole stream."""
    r.delete(keys.game(game_id))
    return project_game(r, store, game_id)


def sweep(
    r: redis.Redis,
    store: EventStore,
    batch: int = 2000,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Catch up every game whose checkpoint lags its stream.

    Reads the global feed after the sweep's own cursor (kept in Redis, so a
    flushed Redis simply starts again from the beginning and rebuilds every
    game), projects each game it touches, then moves the cursor.  Returns the
    number of games caught up."""
    raw = r.get(keys.SWEEP_CURSOR)
    cursor: Cursor = tuple(json.loads(raw)) if raw else START  # type: ignore[assignment]
    caught = seen = 0
    while True:
        rows = store.read_all(after=cursor, limit=batch)
        if not rows:
            break
        heads: dict[str, int] = {}
        for _, e in rows:
            heads[e.game_id] = max(heads.get(e.game_id, 0), e.seq)
        for gid, head in heads.items():
            current = int(r.hget(keys.game(gid), "version") or 0)
            if current < head:
                try:
                    project_game(r, store, gid)
                except (redis.ConnectionError, redis.TimeoutError, StoreUnavailable):
                    raise  # a server away: the next sweep starts from this cursor again
                except Exception:
                    # One game whose stream cannot be folded (a bug, or a
                    # rules version this server lacks) must not stop every
                    # other game from catching up; it is logged loudly.
                    log.exception("sweep: game %s could not be projected", gid)
                    continue
                caught += 1
        seen += len(rows)
        cursor = rows[-1][0]
        r.set(keys.SWEEP_CURSOR, json.dumps(list(cursor)))
        if progress:
            progress(seen, caught)
        if len(rows) < batch:
            break
    return caught


#: Global consumers (leaderboards...) to run after boards in a sweep and a
#: rebuild: ``consumer(r, store, rebuild: bool, progress) -> None``.
GlobalConsumer = Callable[[redis.Redis, EventStore, bool, Callable[[str], None] | None], None]
global_consumers: list[GlobalConsumer] = []


def _delete_matching(r: redis.Redis, pattern: str) -> int:
    n = 0
    batch: list[bytes] = []
    for k in r.scan_iter(match=pattern, count=1000):
        batch.append(k)
        if len(batch) >= 500:
            n += r.delete(*batch)
            batch.clear()
    if batch:
        n += r.delete(*batch)
    return n


def rebuild_all(
    r: redis.Redis,
    store: EventStore,
    game_id: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> int:
    """Drop the read models and fold them again from PostgreSQL alone.

    With ``game_id``, only that game's board.  Streams are read game by game,
    so memory stays flat however many events the store holds."""
    if game_id is not None:
        rebuild_game(r, store, game_id)
        return 1
    _delete_matching(r, "g:{*}")
    _delete_matching(r, "games:*")
    r.delete(keys.SWEEP_CURSOR)
    done = 0
    after = None
    failed: list[str] = []
    # Pipelined: the next game's stream is read (PostgreSQL working, our
    # thread waiting with the GIL released) while this one is folded; at most
    # two streams are held at a time, so memory stays flat.
    with ThreadPoolExecutor(1, thread_name_prefix="rebuild-read") as reader:
        while True:
            ids = store.game_ids(after=after, limit=500)
            ahead = reader.submit(store.read_for_fold, ids[0]) if ids else None
            for i, gid in enumerate(ids):
                assert ahead is not None
                stream = ahead.result()
                ahead = reader.submit(store.read_for_fold, ids[i + 1]) if i + 1 < len(ids) else None
                try:
                    project_game(r, store, gid, stream=stream)
                except (redis.ConnectionError, redis.TimeoutError, StoreUnavailable):
                    raise
                except Exception as exc:
                    # A stream that cannot be folded (tampered with, or a rules
                    # version this server lacks) is reported, not allowed to
                    # stop every other game's rebuild.  `make audit` says why.
                    log.exception("rebuild: game %s could not be projected", gid)
                    failed.append(gid)
                    if progress:
                        progress(f"boards: game {gid} FAILED to fold ({type(exc).__name__}); see make audit GAME={gid}")
                    continue
                done += 1
            if progress and ids:
                progress(f"boards: {done} games rebuilt")
            if len(ids) < 500:
                break
            after = ids[-1]
    for consumer in global_consumers:
        consumer(r, store, True, progress)
    if failed:
        raise RebuildIncomplete(done, failed)
    return done


class RebuildIncomplete(RuntimeError):
    """Some games' streams could not be folded; every other game was rebuilt."""

    def __init__(self, done: int, failed: list[str]):
        super().__init__(f"{done} game(s) rebuilt; {len(failed)} could not be folded: {', '.join(failed[:10])}")
        self.done = done
        self.failed = failed
