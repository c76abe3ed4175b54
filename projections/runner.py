"""Running projections: catch one game up, sweep for laggards, rebuild all.

The checkpoint of a game's board projection is the ``version`` field of its
hash; it is written by the same ``HSET`` as the views, in one script that
Redis runs only if the checkpoint still stands where the job read it
(:data:`GUARDED`).  Two jobs racing on one game cannot both win, a job that
finds nothing new does nothing, and a late or duplicated job is harmless: the
projection is idempotent and order-safe.

A finished game's hash is given a time to live (``retention`` seconds,
``QD_FINISHED_RETENTION_S``; 0: kept for ever) by the same write as its
finish, so its views and its checkpoint leave Redis together.  A
later read finds no hash and asks for a catch-up, which folds the whole
stream again (checkpoint 0) and sets the time to live again: Redis holds the
working set, PostgreSQL the history (docs/PERFORMANCE.md "Redis retention of finished games").
The game lists, the leaderboards and the feeds' cursors never expire.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import orjson
import redis
from prometheus_client import Histogram
from redis.cluster import key_slot
from redis.commands.core import CoreCommands

from projections import deadlines, game_lists, keys, publish
from projections.boards import dumps, info_of, render_board_fields
from service import redis_roles
from service.adapters.eventstore import EventStore, StoreUnavailable
from service.domain import clocks, counting
from service.domain.pipeline import GAME_CREATED, GAME_FINISHED
from service.domain.records import START, Cursor, FoldBatch
from service.domain.replay import fold_batch
from service.games import registry

log = logging.getLogger(__name__)
#: A server away (Redis or PostgreSQL): not a fault of one game, so it stops the pass.
_AWAY: tuple[type[Exception], ...] = (*redis_roles.UNAVAILABLE, StoreUnavailable)

LAG = Histogram(
    "qd_projection_lag_seconds",
    "From an intent's arrival to its events being visible in the read model",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


def project_game(r: redis.Redis, store: EventStore, game_id: str, retention: int = 0) -> int:
    """Fold the events after the game's checkpoint into its read model.
    Returns the version the read model reflects afterwards.  ``retention``:
    seconds a finished game's read model stays in Redis (0: for ever)."""
    return catch_up(r, store, game_id, retention=retention)[0]


def catch_up(
    r: redis.Redis,
    store: EventStore,
    game_id: str,
    retries: int = 8,
    retention: int = 0,
) -> tuple[int, bool]:
    """:func:`project_game`, also telling whether the game is finished."""
    key = keys.game(game_id)
    for _ in range(retries):
        # The client does not decode responses: a field is bytes, or None when missing.
        current = cast(list[bytes | None], r.hmget(key, *_CURRENT))
        raw = store.read_for_fold({game_id: _version_of(current)}).get(game_id)
        batch = FoldBatch.parse(raw) if raw is not None else _NOTHING
        version, finished, write, _ = _prepare(
            game_id,
            current,
            batch,
            lambda: store.token_hashes(game_id),
            retention,
            lambda: store.decided_seats([game_id])[game_id],
        )
        if write is None:
            return version, finished
        if _guarded(r, [(key, _version_of(current) or None, write)])[0]:
            _observe_lag(write.newest_at)
            return version, finished
        # Written by someone else since our read: read again.
    # Someone else keeps writing newer versions; they will have caught up.
    raw_version, status = r.hmget(key, "version", "status")
    return int(raw_version or 0), status == b"finished"


#: Streams a rebuild has already read (``EventStore.read_for_fold``),
#: unparsed, and the games' token hashes.
Prefetched = tuple[dict[str, tuple[Any, ...]], dict[str, list[bytes]]]


def catch_up_many(
    r: redis.Redis,
    store: EventStore,
    game_ids: list[str],
    retention: int = 0,
    prefetched: Prefetched | None = None,
    known: Checkpoints | None = None,
) -> tuple[dict[str, tuple[int, bool]], dict[str, Exception]]:
    """:func:`catch_up` for several games in a handful of round trips,
    whatever their number: one pipelined read of their checkpoints, one query
    for all their new events, one guarded write (:data:`GUARDED`: each game's
    write runs only if its checkpoint still stands where it was read).  Returns
    ``{game: (version, finished)}`` and the games whose stream could not be
    folded (with why); those are not written.  A game written by someone else
    meanwhile is caught up alone (:func:`catch_up`).

    Under load a drain job projects dozens of games at once, and four round
    trips per game were most of its time (``make bench``: lag).

    ``prefetched``: the games' streams and token hashes already read (a
    rebuild reads ahead in other threads), parsed one game at a time here so
    that only one parsed stream is held at once.  ``known``: the drain job's
    own last writes (:class:`Checkpoints`); a game found there is neither read
    back from Redis nor parsed again: its guard is the version written then."""
    results: dict[str, tuple[int, bool]] = {}
    failed: dict[str, Exception] = {}
    currents: dict[str, list[Any] | Known] = {}
    for gid in game_ids:
        mine = known.pop(gid) if known is not None else None
        if mine is not None:
            currents[gid] = mine
    unread = [gid for gid in game_ids if gid not in currents]
    if unread:
        with r.pipeline(transaction=False) as reads:
            for gid in unread:
                reads.hmget(keys.game(gid), *_CURRENT)
            currents.update(zip(unread, reads.execute(), strict=True))
    if prefetched is None:
        raws = store.read_for_fold({gid: _version_of(currents[gid]) for gid in game_ids})
        new_games = [gid for gid in game_ids if _first_write(currents[gid]) and gid in raws]
        hashes = store.token_hashes_many(new_games) if new_games else {}
    else:
        raws, hashes = prefetched

    def batch_of(gid: str) -> FoldBatch:
        return FoldBatch.parse(raws[gid]) if gid in raws else _NOTHING

    writes: list[tuple[_Write, Any, Any]] = []
    for gid in game_ids:
        current = currents[gid]
        try:
            version, finished, write, state = _prepare(
                gid,
                current,
                batch_of(gid),
                _hashes_of(hashes, gid),
                retention,
                _decided_of(store, gid),
            )
        except Exception as exc:
            failed[gid] = exc
            continue
        results[gid] = (version, finished)
        if write is not None:
            writes.append((write, current, state))
        elif known is not None and isinstance(current, Known):
            known.put(gid, current)  # nothing new: still what we wrote
    if not writes:
        return results, failed
    done = _guarded(r, [(w.key, _version_of(current) or None, w) for w, current, _ in writes])
    for (write, _, state), ok in zip(writes, done, strict=True):
        gid = write.info["id"]
        if not ok:
            # Written by someone else since our read: fold it again from what is there now.
            try:
                results[gid] = catch_up(r, store, gid, retention=retention)
            except _AWAY:
                raise
            except Exception as exc:
                results.pop(gid, None)
                failed[gid] = exc
            continue
        _observe_lag(write.newest_at)
        if known is not None and write.fields["status"] != "finished":
            known.put(gid, Known(results[gid][0], state, write.info))
    return results, failed


@dataclass(slots=True)
class Known:
    """A game's read model as this process last wrote it: its checkpoint, the engine's
    state at it (the object folded, which the next fold advances in place), its identity."""

    version: int
    state: Any
    info: dict[str, Any]


class Checkpoints:
    """The drain job's last writes, most recent last, at most ``size`` games
    (``QD_PROJECTION_CACHE``): a game projected again is folded from here, with no
    read of its checkpoint and state back from Redis (two round trips and a parse
    fewer a wake, ``make bench``: docs/PERFORMANCE.md "The drain job keeps its last writes").  Trusted
    only through the guard: a write over a checkpoint that moved meanwhile (another
    worker, a rebuild, a flush) is refused by Redis, and the game is read again.
    An entry is taken out while its game is folded (a fold advances the state in
    place) and put back only after the write succeeded."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._games: OrderedDict[str, Known] = OrderedDict()

    def pop(self, game_id: str) -> Known | None:
        return self._games.pop(game_id, None)

    def put(self, game_id: str, entry: Known) -> None:
        if self.size <= 0:
            return
        self._games[game_id] = entry
        self._games.move_to_end(game_id)
        while len(self._games) > self.size:
            self._games.popitem(last=False)

    def clear(self) -> None:
        self._games.clear()

    def __len__(self) -> int:
        return len(self._games)


def _version_of(current: list[Any] | Known) -> int:
    return current.version if isinstance(current, Known) else int(current[0] or 0)


def _first_write(current: list[Any] | Known) -> bool:
    """The hash has no identity yet: its first write (which carries the seats' token hashes)."""
    return not isinstance(current, Known) and current[2] is None


#: The writes of several games, each run by Redis only if its game's checkpoint
#: still stands where it was read; atomic as a whole, like a ``MULTI``.  KEYS: the
#: games' hashes.  ARGV, for each game in KEYS' order: the version expected (``''``:
#: no hash), its number of commands, then each command as its number of words and
#: the words.  Returns, per game, 1 if written, 0 if its checkpoint had moved.
GUARDED = """
local written = {}
local i = 1
for k = 1, #KEYS do
    local expected = ARGV[i]
    local commands = tonumber(ARGV[i + 1])
    i = i + 2
    local now = redis.call('HGET', KEYS[k], 'version')
    local ok = (now == false and expected == '') or now == expected
    for _ = 1, commands do
        local n = tonumber(ARGV[i])
        if ok then
            redis.call(unpack(ARGV, i + 1, i + n))
        end
        i = i + n + 1
    end
    written[k] = ok and 1 or 0
end
return written
"""


class _Recorder(CoreCommands):
    """Takes the commands :func:`_apply` queues, as a pipeline would, as words for
    :data:`GUARDED` (redis-py builds each command's words)."""

    #: redis-py's commands protocol names the client's event dispatcher; a recorder sends nothing.
    _event_dispatcher: Any = None

    def __init__(self) -> None:
        self.commands = 0
        self.words: list[Any] = []

    def execute_command(self, *args: Any, **options: Any) -> None:
        self.commands += 1
        self.words.append(len(args))
        self.words.extend(args)


def _guarded(r: redis.Redis, writes: list[tuple[str, int | None, _Write]]) -> list[bool]:
    """Run ``(key, version expected or None for no hash, write)`` through :data:`GUARDED`
    in one round trip; which were written."""
    if redis_roles.is_cluster(r):
        return _guarded_on_cluster(r, writes)
    args: list[Any] = []
    for _, expected, write in writes:
        recorded = _Recorder()
        _apply(recorded, write)
        args += ("" if expected is None else expected, recorded.commands, *recorded.words)
    done = r.register_script(GUARDED)(keys=[key for key, _, _ in writes], args=args)
    return [bool(d) for d in done]


def cluster_plan(write: _Write) -> tuple[int, list[Any], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """A write's commands split for a Redis Cluster, where a script may only touch
    its keys' slot: ``(n, words, before, after)``.  ``n`` commands (``words``, as
    :data:`GUARDED` takes them) are of the game's own slot (its hash and its
    channels; ``PUBLISH`` becomes ``SPUBLISH``, sharded pub/sub, which the API's
    hub subscribes to on a cluster).  The others each name one key of another
    slot: the game lists and the clocks' index (``before``: idempotent, written
    before the guarded write so that a crash between never leaves a game out of
    them; the next catch-up writes them again; the clocks' index entry is versioned,
    ``deadlines.versioned``), and the account seats'
    announcements (``after``: news only once the write is there)."""
    recorded = _Recorder()
    _apply(recorded, write)
    slot = key_slot(write.key.encode())
    n, words = 0, []
    before: list[tuple[Any, ...]] = []
    after: list[tuple[Any, ...]] = []
    i, flat = 0, recorded.words
    while i < len(flat):
        size = flat[i]
        command = list(flat[i + 1 : i + 1 + size])
        i += size + 1
        if command[1] == keys.DEADLINES:
            # One versioned entry instead (the writers of a game may reach it in either order).
            entry = deadlines.versioned(write.info["id"], write.fields["version"], write.deadline)
            if entry not in before:
                before.append(entry)
            continue
        publishing = str(command[0]).upper() == "PUBLISH"
        if publishing:
            command[0] = "SPUBLISH"
        name = command[1] if isinstance(command[1], bytes) else str(command[1]).encode()
        if key_slot(name) == slot:
            n += 1
            words += [size, *command]
        else:
            (after if publishing else before).append(tuple(command))
    return n, words, before, after


def _guarded_on_cluster(r: redis.Redis, writes: list[tuple[str, int | None, _Write]]) -> list[bool]:
    """:func:`_guarded` on a Redis Cluster: one guarded script per game (its keys in
    one slot), the commands of other slots around it (:func:`cluster_plan`)."""
    script = r.register_script(GUARDED)
    done = []
    for key, expected, write in writes:
        n, words, before, after = cluster_plan(write)
        if before:
            _run(r, before)
        ok = bool(script(keys=[key], args=["" if expected is None else expected, n, *words])[0])
        if ok and after:
            _run(r, after)
        done.append(ok)
    return done


def _run(r: redis.Redis, commands: list[tuple[Any, ...]]) -> None:
    # Not a transaction: each command is one key, and a cluster pipeline sends each
    # node its own commands.
    with r.pipeline(transaction=False) as pipe:
        for command in commands:
            pipe.execute_command(*command)
        pipe.execute()


#: What a projection reads of a game's hash before folding.
_CURRENT = ("version", "state", "info", "status")
_NOTHING = FoldBatch(0, [], [], None, None)


@dataclass(frozen=True, slots=True)
class _Write:
    key: str
    info: dict[str, Any]
    fields: dict[str, Any]
    finished_now: bool
    newest_at: str | None
    #: The earliest deadline of a seat to act (``projections/deadlines.py``), if a clock runs.
    deadline: str | None = None
    #: Seconds the hash has left once written (a game finishing now, with a retention); 0: no expiry.
    expire: int = 0
    #: The hash's first write (it had no ``info``): a new game, a rebuild, or a finished game
    #: brought back after its retention.
    first: bool = True


def _hashes_of(hashes: dict[str, list[bytes]], gid: str) -> Callable[[], list[bytes]]:
    """``gid``'s seat token hashes, from those read for the batch."""
    return lambda: hashes.get(gid, [])


def _decided_of(store: EventStore, gid: str) -> Callable[[], set[int]]:
    """The seats of ``gid`` that decided, asked of the store when needed."""
    return lambda: store.decided_seats([gid])[gid]


def _prepare(
    game_id: str,
    current: list[bytes | None] | Known,
    batch: FoldBatch,
    token_hashes: Callable[[], list[bytes]],
    retention: int = 0,
    decided: Callable[[], set[int]] | None = None,
) -> tuple[int, bool, _Write | None, Any]:
    """What to write for a game, given its hash's ``_CURRENT`` fields (or this
    process's :class:`Known` last write) and the events read after its checkpoint:
    ``(version, finished, write or None, the engine's state folded)``.
    ``decided``: the seats that made a decision of their own, asked only when a
    rated game finishes (``service.domain.counting``)."""
    if isinstance(current, Known):
        version, raw_state, raw_info, status = current.version, None, None, None
    else:
        raw_version, raw_state, raw_info, status = current
        version = int(raw_version or 0)
    batch = batch.after(version)
    if not batch.types:
        return version, status == b"finished", None, None
    if batch.types[0] == GAME_CREATED:
        info = info_of(game_id, batch.datas[0], batch.created_at)
    elif isinstance(current, Known):
        info = current.info
    elif raw_info is not None:
        info = orjson.loads(raw_info)
    else:
        raise RuntimeError(f"game {game_id}: stream has no opening event")
    # GameFinished closes a stream: nothing is appended after it.
    closed = batch.types[-1] == GAME_FINISHED
    finished = status == b"finished" or closed
    # The platform's result (forfeits ranked last, or an abort) closes the stream.
    result = batch.datas[-1]["result"] if closed else None
    engine = registry.get(info["game"], info["rules_version"])
    # This process's own last fold, or the checkpoint's JSON (render_board_fields makes the
    # bytes written independent of which: it renders from the canonical state).
    state = current.state if isinstance(current, Known) else orjson.loads(raw_state) if raw_state else None
    state = fold_batch(engine, batch, state)
    assert state is not None, f"game {game_id}: its events fold to no state"  # the opening's append sets one up
    fields = render_board_fields(engine, info, state, batch.last_seq, finished, result=result, clock=batch.clock)
    if closed and counting.asked_rated(info):
        # Once per rated game, at its finish: did every seat make its first decision?
        reason = counting.unrated_reason(info, result, decided() if decided else set())
        if reason is not None:
            fields["unrated_reason"] = reason
    first = not isinstance(current, Known) and raw_info is None
    if first:
        # Seat token hashes, so queries can tell seats apart without asking
        # PostgreSQL.
        fields["auth"] = dumps([h.hex() for h in token_hashes()])
    deadline = None if finished else clocks.earliest(batch.clock)
    finished_now = finished and status != b"finished"
    expire = retention if finished_now and retention > 0 else 0
    write = _Write(keys.game(game_id), info, fields, finished_now, batch.newest_at, deadline, expire, first)
    return batch.last_seq, finished, write, state


def _apply(pipe: Any, write: _Write) -> None:
    pipe.hset(write.key, mapping=write.fields)
    if write.expire:
        # The finish and the time to live in one write: views and checkpoint leave together.
        pipe.expire(write.key, write.expire)
    # The game lists move in the same write as the board they index.  What they
    # hold of a game (its creation time, type, players, rating, status) comes
    # from its opening event and its status alone, so only the hash's first
    # write and the finish can change them: rewriting the same members on every
    # commit was most of the write's commands (docs/PERFORMANCE.md, "Only what can change is written").
    if write.first or write.finished_now:
        game_lists.index_game(pipe, write.info, write.fields, write.finished_now)
    # The clocks' index too: the scheduler looks for timeouts there (workers/timeouts.py).
    # A game created without a clock never has an entry: removing it again is a no-op.
    if write.first or write.deadline is not None or "clock" in write.info:
        deadlines.index(pipe, write.info["id"], write.deadline)
    # Followers (streams, waits, accounts) are pushed the news from inside the
    # same write: heard only once the write is there (projections/publish.py).
    publish.game_written(pipe, write.info, write.fields, write.finished_now, write.newest_at)


def _observe_lag(received: str | None) -> None:
    if received:
        lag = time.time() - datetime.fromisoformat(received.replace("Z", "+00:00")).timestamp()
        LAG.observe(max(lag, 0.0))


def rebuild_game(r: redis.Redis, store: EventStore, game_id: str, retention: int = 0) -> int:
    """Drop and rebuild one game's read model from its whole stream."""
    r.delete(keys.game(game_id))
    return project_game(r, store, game_id, retention)


def sweep(
    r: redis.Redis,
    store: EventStore,
    batch: int = 2000,
    progress: Callable[[int, int], None] | None = None,
    retention: int = 0,
) -> int:
    """Catch up every game whose checkpoint lags its stream.

    Reads the global feed after the sweep's own cursor (kept in Redis, so a
    flushed Redis simply starts again from the beginning and rebuilds every
    game), projects each game it touches, then moves the cursor.  Returns the
    number of games caught up."""
    raw = r.get(keys.SWEEP_CURSOR)
    cursor: Cursor = tuple(json.loads(raw)) if raw else START
    caught = seen = 0
    while True:
        rows = store.feed_positions(after=cursor, limit=batch)
        if not rows:
            break
        heads: dict[str, int] = {}
        for _, gid, seq in rows:
            heads[gid] = max(heads.get(gid, 0), seq)
        # Every touched game's checkpoint in one round trip.
        with r.pipeline(transaction=False) as pipe:
            for gid in heads:
                pipe.hget(keys.game(gid), "version")
            versions = pipe.execute()
        for (gid, head), current in zip(heads.items(), versions, strict=True):
            if int(current or 0) < head:
                try:
                    project_game(r, store, gid, retention)
                except _AWAY:
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


#: A projection that reads the global feed (leaderboards...), run after the
#: boards in a sweep and a rebuild: ``consumer(r, store, rebuild, progress)``.
#: The composition root (``service.bootstrap``) lists them, in order.
GlobalConsumer = Callable[[redis.Redis, EventStore, bool, Callable[[str], None] | None], int]


def _delete_matching(r: redis.Redis, pattern: str) -> int:
    # On a Redis Cluster the scan visits every primary, and the client splits each
    # batch's DEL by slot.
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


#: Groups of streams read ahead during a rebuild (see ``rebuild_boards``).
READERS = 2
#: Games a rebuild reads in one query and writes in one script.
GROUP = 16


def rebuild_all(
    r: redis.Redis,
    store: EventStore,
    game_id: str | None = None,
    progress: Callable[[str], None] | None = None,
    processes: int = 1,
    connect: Callable[[], tuple[redis.Redis, EventStore]] | None = None,
    consumers: Sequence[GlobalConsumer] = (),
    retention: int = 0,
) -> int:
    """Drop the read models and fold them again from PostgreSQL alone.

    With ``game_id``, only that game's board.  Streams are read game by game,
    so memory stays flat however many events the store holds.  With
    ``processes`` > 1 (and ``connect`` to open a process's own connections),
    the games are split between that many forked processes: folding is pure
    Python, so one process is bound by its one core (``make bench``).

    ``retention``: as live, every finished game's hash gets that time to live
    from the moment the rebuild writes it (not from when the game ended: a
    game is rebuilt as a read would bring it back), so a rebuild gives the
    same bytes as live and its finished games leave Redis one retention later."""
    if game_id is not None:
        rebuild_game(r, store, game_id, retention)
        return 1
    _delete_matching(r, "g:{*}")
    _delete_matching(r, "games:*")
    for key in (keys.SWEEP_CURSOR, keys.DEADLINE_VERSIONS):  # two slots on a cluster
        r.delete(key)
    if processes > 1 and connect is not None:
        done, failed = _rebuild_in_processes(processes, connect, progress, retention)
    else:
        done, failed = rebuild_boards(r, store, progress=progress, retention=retention)
    for consumer in consumers:
        consumer(r, store, True, progress)
    if failed:
        raise RebuildIncomplete(done, failed)
    return done


def rebuild_boards(
    r: redis.Redis,
    store: EventStore,
    shard: tuple[int, int] = (0, 1),
    progress: Callable[[str], None] | None = None,
    retention: int = 0,
) -> tuple[int, list[str]]:
    """Fold every game's board from scratch (its hash already deleted).
    ``shard=(k, n)``: only the k-th of every n games, in id order.  Returns
    the games rebuilt and those whose stream could not be folded."""
    k, n = shard
    label = f"boards[{k + 1}/{n}]" if n > 1 else "boards"
    done = seen = 0
    after = None
    failed: list[str] = []
    # Pipelined, and by groups: the next groups' streams are read by READERS
    # threads (each PostgreSQL backend building the streams' text while this
    # thread waits with the GIL released) while this one is folded, and each
    # group is read in one query and written in one script.  Game by game, the
    # round trips (stream, token hashes, WATCH, read, MULTI) cost ~2 ms a game,
    # more than folding a small game (docs/PERFORMANCE.md, "Rebuild
    # reads").  At most READERS + 1 groups of GROUP games are held at a time,
    # and one parsed stream, so memory stays flat however many events the
    # store holds.

    def read(group: list[str]) -> Prefetched:
        # Text only: parsing here would hold the GIL for milliseconds at a
        # time, stalling the folding thread at each of its Redis round trips.
        return store.read_for_fold(dict.fromkeys(group, 0)), store.token_hashes_many(group)

    with ThreadPoolExecutor(READERS, thread_name_prefix="rebuild-read") as reader:
        while True:
            page = store.game_ids(after=after, limit=500)
            # Shards by position in the whole id order, so n processes split
            # any mix of long and short games about evenly.
            ids = [gid for i, gid in enumerate(page, start=seen) if i % n == k]
            seen += len(page)
            groups = [ids[i : i + GROUP] for i in range(0, len(ids), GROUP)]
            ahead = deque(reader.submit(read, group) for group in groups[:READERS])
            for i, group in enumerate(groups):
                prefetched = ahead.popleft().result()
                if i + READERS < len(groups):
                    ahead.append(reader.submit(read, groups[i + READERS]))
                results, failures = catch_up_many(r, store, group, retention=retention, prefetched=prefetched)
                done += len(results)
                for gid, exc in failures.items():
                    # A stream that cannot be folded (tampered with, or a rules
                    # version this server lacks) is reported, not allowed to
                    # stop every other game's rebuild.  `make audit` says why.
                    log.error("rebuild: game %s could not be projected", gid, exc_info=exc)
                    failed.append(gid)
                    if progress:
                        progress(
                            f"{label}: game {gid} FAILED to fold ({type(exc).__name__}); see make audit GAME={gid}"
                        )
            if progress and ids:
                progress(f"{label}: {done} games rebuilt")
            if len(page) < 500:
                break
            after = page[-1]
    return done, failed


#: Set in the parent just before forking the rebuild's processes (a forked
#: child inherits it; nothing is pickled but the shard number).
_fork_connect: Callable[[], tuple[redis.Redis, EventStore]] | None = None
_fork_progress: Callable[[str], None] | None = None
_fork_retention = 0


def _rebuild_shard(k: int, n: int) -> tuple[int, list[str]]:
    assert _fork_connect is not None
    # Its own connections: the parent's sockets must never be shared.
    r, store = _fork_connect()
    return rebuild_boards(r, store, (k, n), _fork_progress, _fork_retention)


def _rebuild_in_processes(
    n: int,
    connect: Callable[[], tuple[redis.Redis, EventStore]],
    progress: Callable[[str], None] | None,
    retention: int = 0,
) -> tuple[int, list[str]]:
    global _fork_connect, _fork_progress, _fork_retention
    _fork_connect, _fork_progress, _fork_retention = connect, progress, retention
    try:
        # fork: the children start with every module (and engine) loaded.
        with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(_rebuild_shard, range(n), [n] * n))
    finally:
        _fork_connect = _fork_progress = None
        _fork_retention = 0
    return sum(d for d, _ in results), [gid for _, f in results for gid in f]


class RebuildIncomplete(RuntimeError):
    """Some games' streams could not be folded; every other game was rebuilt."""

    def __init__(self, done: int, failed: list[str]):
        super().__init__(f"{done} game(s) rebuilt; {len(failed)} could not be folded: {', '.join(failed[:10])}")
        self.done = done
        self.failed = failed
