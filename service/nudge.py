"""The nudge: how a commit reaches the worker that projects it, one object for
games and tournaments (:class:`ProjectionQueue`, built once by ``service.bootstrap``).

After a commit, the writer calls it with what it committed, one entry point
per kind: ``nudge(game_id)`` for a game, ``nudge.tournament(tournament_id,
events)`` for a tournament.  Where the commit is a unit of work's
(``service.service_layer.unit_of_work``), its committed hook makes that call,
so nothing is nudged before its commit, nor after a rollback.  A read that
finds a read model missing calls the same entry point (a tournament with no
events) to ask for it.

Underneath, the two kinds cost differently, and each keeps its own way:

* a tournament's commits are few (a registration, a start, one per table start
  and end): each enqueues its own projection job, and an advance job when it
  paired a round or aborted the tournament (its tables' games are to be created
  or aborted); a lost job is made up by the worker's sweep;
* a game's commits are the hot path: the dirty-set protocol below, whose marks
  go in groups (``service.coalesce``).

The games' protocol, all of it here (keys, TTLs, the two Lua scripts):

* a commit **marks** its game dirty in its shard's set and, unless that
  shard's drain job is already queued or lingering, flags one ``queued`` and
  enqueues it (one atomic script, one round trip, shared by the commits that
  arrived while the one before was in flight: ``service.coalesce``); if one is
  lingering, it **wakes** it instead;
* the drain job (``workers.jobs.drain``) flags the shard ``lingering`` as it
  starts, drains the set, then **lingers**: it projects each new commit as it
  arrives, woken through a list, until it is idle or wanted elsewhere, and
  then **unlingers** atomically and drains the set once more.

The flag moves ``queued`` -> ``lingering`` -> absent, so no commit can be
missed: a commit that saw ``queued`` rides on a job that has not started (it
drains the set); one that saw ``lingering`` woke the running job, whose next
wait returns at once (or its game is in the set the job drains after it
stops); one that saw no flag enqueues a new job.

The job takes the flag as it *starts*, not after its first drain: a commit
during that drain would otherwise have found no flag and enqueued one more
job, and under load one did nearly every time, so jobs alternated instead of
lingering (``make bench``, lag phase: 58-123 such jobs in a run, each a full
RQ job cycle that the commits behind it waited for; docs/PERFORMANCE.md, "Lag: the drain job lingers").
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Sequence
from typing import Any

import redis
from rq import Queue

from service import metrics
from service.coalesce import Coalescer

log = logging.getLogger(__name__)

#: Seconds a "drain job queued" flag lives at most: a job lost while its flag
#: lives holds up its shard's games this long at most (or until the worker's
#: sweep, every 5 s); while the worker is backlogged longer, a shard gets one
#: more (harmless) job per TTL.
PENDING_TTL = 2
#: The flag's value while a drain job lingers.
LINGERING = b"lingering"
#: TTL of the "lingering" flag, refreshed while the job lives: a worker killed
#: while lingering holds its shard up this long at most (and the sweep runs).
LINGER_TTL = 2
#: A lingering job waits this long for a wake-up before it checks whether
#: other jobs wait for the worker.
LINGER_POLL = 0.05

#: The job a nudge enqueues (by name: the API never imports the worker's jobs).
DRAIN_JOB = "workers.jobs.drain"
#: The tournaments' jobs (by name, as the drain job's).
PROJECT_TOURNAMENT_JOB = "workers.tournaments.project"
ADVANCE_TOURNAMENT_JOB = "workers.tournaments.advance"
#: Events after which a tournament's round has tables to start (or, after an abort,
#: games to abort that the abort's own request did not reach).
_NEW_ROUND = frozenset({"RoundPaired", "TournamentAborted"})

#: After commits, in one round trip: mark their games (``ARGV[2]``, ...) dirty; if
#: no drain job is queued or lingering, flag one as queued (for ``ARGV[1]`` seconds)
#: and answer 1 (the caller enqueues it); if one is lingering, wake it.  The games
#: go in by a thousand: Lua's ``unpack`` fails past ~8,000 values, and a batch holds
#: as many commits as an API process had waiting (up to its worker connections).
MARK = """
for i = 2, #ARGV, 1000 do
    redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
local flag = redis.call('GET', KEYS[2])
if not flag then
    redis.call('SET', KEYS[2], 'queued', 'EX', ARGV[1])
    return 1
end
if flag == 'lingering' then
    redis.call('LPUSH', KEYS[3], '1')
    redis.call('LTRIM', KEYS[3], 0, 0)
end
return 0
"""

#: Stop lingering: delete the flag only if it still says "lingering".  If it
#: expired meanwhile and a commit flagged a new job "queued", the flag is that
#: job's and stays.
UNLINGER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
end
"""


def shard_of(game_id: str, shards: int) -> int:
    return zlib.crc32(game_id.encode()) % shards


def dirty(shard: int) -> str:
    """Set of games with commits not yet projected, in one shard."""
    return f"projection:{{{shard}}}:dirty"


def drain_pending(shard: int) -> str:
    """The shard's drain job: ``queued`` while one is queued and not started
    (it will drain whatever the set holds when it runs), ``lingering`` while
    one is waiting for new commits (each commit wakes it); absent otherwise."""
    return f"projection:{{{shard}}}:pending"


def wake(shard: int) -> str:
    """List a commit pushes to, to wake the shard's lingering drain job."""
    return f"projection:{{{shard}}}:wake"


class ProjectionQueue:
    """The projections' queue, what a commit nudges: the writers' entry points (a
    game's, ``queue(game_id)``; a tournament's) and the workers' end (the drain
    job's, and a tournament's advance), over one Redis connection and RQ queue."""

    def __init__(self, r: redis.Redis, queue: Queue, shards: int):
        self.redis = r
        self.queue = queue
        self.shards = shards
        self._mark = r.register_script(MARK)
        self._unlinger = r.register_script(UNLINGER)
        self._coalesced: Coalescer[str] = Coalescer(self._mark_all)

    # -- the writers' side -----------------------------------------------------
    def __call__(self, game_id: str) -> None:
        """After a commit (or for a missing read model): mark the game dirty
        and make sure a worker drains its shard.  If Redis is away the intent
        still stands; the worker's sweep projects it later.

        Group commit (``service.coalesce``): the commits that arrive while a
        mark is in flight are marked together in the next one, one round trip
        for all (an API process under load has several requests between their
        append and their mark at once; docs/PERFORMANCE.md, "The nudge's group commit").
        Each call returns once its own game is marked, as it would alone."""
        self._coalesced(game_id)

    def _mark_all(self, game_ids: list[str]) -> None:
        """One round trip: the :data:`MARK` script once per shard the games fall in."""
        try:
            by_shard: dict[int, list[str]] = {}
            for gid in game_ids:
                by_shard.setdefault(shard_of(gid, self.shards), []).append(gid)
            if len(by_shard) == 1:
                [(shard, games)] = by_shard.items()
                answers = [self._mark(keys=self._keys(shard), args=[PENDING_TTL, *games])]
            else:
                with self.redis.pipeline(transaction=False) as pipe:
                    for shard, games in by_shard.items():
                        self._mark(keys=self._keys(shard), args=[PENDING_TTL, *games], client=pipe)
                    answers = pipe.execute()
            for shard, enqueue in zip(by_shard, answers, strict=True):
                # Coalesce: while a drain job for the shard is queued (not started)
                # or lingering, it will project these games too.  Under load one RQ
                # job projects many games: RQ's own bookkeeping (~30 Redis round
                # trips a job) cost several times a projection (docs/PERFORMANCE.md).
                if enqueue:
                    self.queue.enqueue_call(DRAIN_JOB, args=(shard,), result_ttl=0, failure_ttl=3600)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            metrics.ENQUEUE_FAILURES.inc(len(game_ids))
            log.warning("projection of %d game(s) not enqueued (%s); the sweep will catch up", len(game_ids), exc)

    @staticmethod
    def _keys(shard: int) -> list[str]:
        return [dirty(shard), drain_pending(shard), wake(shard)]

    def tournament(self, tournament_id: str, events: Sequence[Any] = ()) -> None:
        """After a tournament's commit of ``events`` (none: a read found its read
        model missing): project it, and advance it when a round was just paired
        or the tournament aborted.  If Redis is away the commit still stands; the
        worker's sweep advances and projects it later."""
        try:
            self.queue.enqueue_call(PROJECT_TOURNAMENT_JOB, args=(tournament_id,), result_ttl=0, failure_ttl=3600)
            if any(e.type in _NEW_ROUND for e in events):
                self.advance(tournament_id)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            metrics.ENQUEUE_FAILURES.inc()
            log.warning("tournament %s not enqueued (%s); the sweep will catch up", tournament_id, exc)

    # -- the workers' side -----------------------------------------------------
    def advance(self, tournament_id: str) -> None:
        """Ask for a tournament's advance (the drain saw one of its games end)."""
        self.queue.enqueue_call(ADVANCE_TOURNAMENT_JOB, args=(tournament_id,), result_ttl=0, failure_ttl=3600)

    def take_over(self, shard: int) -> None:
        """A drain job starts: flag the shard ``lingering`` (in place of its own
        ``queued``) before reading the set, so a game marked from now on wakes
        this job and one marked before is in the set.  Whatever ends the job
        clears the flag first and drains once more (:meth:`stop_lingering`)."""
        self.redis.set(drain_pending(shard), LINGERING, ex=LINGER_TTL)

    def pop_dirty(self, shard: int, count: int) -> list[str]:
        # SPOP with a count answers a list (of bytes: no decode_responses).
        return [gid.decode() for gid in self.redis.spop(dirty(shard), count)]  # type: ignore[union-attr]

    def put_back(self, shard: int, game_ids: list[str]) -> None:
        self.redis.sadd(dirty(shard), *game_ids)

    def wait_for_commit(self, shard: int, timeout: float) -> bool:
        """Block until a commit wakes the lingering job, or ``timeout``."""
        return bool(self.redis.brpop([wake(shard)], timeout=timeout))

    def wait_and_pop(self, shard: int, timeout: float, count: int) -> tuple[list[str], bool]:
        """:meth:`wait_for_commit`, then :meth:`pop_dirty` and :meth:`others_waiting`,
        in ONE round trip: Redis runs a pipeline's commands in order, so the pop
        happens once the wait is over (woken or timed out).  A lingering job
        under load is woken about once per commit: one round trip per wake
        instead of three (docs/PERFORMANCE.md, "Lag: the drain job lingers").  Returns the
        games popped (whether woken or not: they must be projected) and whether
        another job waits."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.brpop([wake(shard)], timeout=timeout)
            pipe.spop(dirty(shard), count)
            pipe.llen(self.queue.key)
            _, popped, waiting = pipe.execute()
        return [gid.decode() for gid in popped or ()], bool(waiting)

    def keep_lingering(self, shard: int) -> None:
        self.redis.expire(drain_pending(shard), LINGER_TTL)

    def stop_lingering(self, shard: int) -> None:
        self._unlinger(keys=[drain_pending(shard)], args=[LINGERING])

    def others_waiting(self) -> bool:
        """Another job waits in the queue: this worker is wanted elsewhere."""
        return bool(self.redis.llen(self.queue.key))
