"""Analyses of finished games in Redis: the kept result, the mark of one being computed, the daily
quotas, and the job on the analysis queue (docs/API.md "Analysis"; the job is ``workers/analysis.py``).

What one client can make the service spend is bounded three ways:

* a game is analysed once: its result is kept (``QD_ANALYSIS_TTL_S``), and while it is computed a
  mark stands (``SET NX``), so asking again, by anyone, enqueues nothing and costs nothing;
* a new analysis counts one in its client's quota of the UTC day: the account's
  (``QD_ANALYSIS_PER_DAY``), or the address's for a caller without an account
  (``QD_ANALYSIS_PER_DAY_ADDRESS``).  A refused request counts nothing, and neither does one that
  lost the race to another client's (its count is taken back);
* at most ``QD_ANALYSIS_QUEUE_MAX`` jobs wait, whoever asked: beyond, ``503 busy`` before any count.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Protocol

import redis

from service.config import Settings

#: The job (by name) and how long a job may run before RQ stops it.
JOB = "workers.analysis.run"
JOB_TIMEOUT_S = 900
#: Seconds the mark of an analysis being computed stands at most (a worker lost mid-job frees it).
PENDING_TTL_S = JOB_TIMEOUT_S + 60
#: Seconds a client is told to wait before asking again while an analysis is computed.
RETRY_AFTER_S = 5

#: Counts one for a client in its day, unless its quota is spent.  KEYS: the day's counter;
#: ARGV: the quota, the counter's lifetime in seconds.  Returns -1 when counted, else the
#: seconds until the counter expires.
TAKE = """
local n = tonumber(redis.call('get', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then
  local ttl = redis.call('ttl', KEYS[1])
  if ttl < 1 then ttl = 1 end
  return ttl
end
redis.call('incr', KEYS[1])
redis.call('expire', KEYS[1], tonumber(ARGV[2]))
return -1
"""


class JobQueue(Protocol):
    """What is used of the analysis queue (an RQ ``Queue``, built by ``service.bootstrap.analyses``)."""

    @property
    def count(self) -> int: ...

    def enqueue(self, f: str, *args: Any, **kwargs: Any) -> Any: ...


@dataclass(frozen=True)
class Asked:
    """What a request for an analysis found: ``done`` (``result`` set), ``pending`` (computed now),
    ``quota`` (the client's day is spent: ``retry_after``) or ``busy`` (the queue is full)."""

    outcome: str
    result: dict[str, Any] | None = None
    retry_after: int = RETRY_AFTER_S


class Analyses:
    def __init__(self, settings: Settings, client: Any, queue: JobQueue, prefix: str = "qd:analysis") -> None:
        """``client``: the read side's Redis; ``queue``: the analysis queue (on the queue's Redis)."""
        self.settings = settings
        self.redis = client
        self.queue = queue
        self.prefix = prefix

    def result_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:result"

    def pending_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:pending"

    def quota_key(self, client: str, day: str) -> str:
        return f"{self.prefix}:quota:{{{client}}}:{day}"

    def kept(self, game_id: str, fmt: int) -> dict[str, Any] | None:
        raw = self.redis.get(self.result_key(game_id))
        if raw is None:
            return None
        found: dict[str, Any] = json.loads(raw)
        return found if found.get("format") == fmt else None

    def ask(self, game_id: str, fmt: int, *, account: str | None, address: str, now: float | None = None) -> Asked:
        """The analysis of ``game_id`` if kept; else enqueue it (counted in the caller's quota) unless
        it is being computed already."""
        found = self.kept(game_id, fmt)
        if found is not None:
            return Asked("done", found)
        if self.redis.exists(self.pending_key(game_id)):
            return Asked("pending")
        if self.queue.count >= self.settings.analysis_queue_max:
            return Asked("busy")
        now = time.time() if now is None else now
        day = time.strftime("%Y%m%d", time.gmtime(now))
        until_midnight = 86400 - int(now) % 86400
        client, quota = (
            (f"k:{account}", self.settings.analysis_per_day)
            if account is not None
            else (f"a:{address}", self.settings.analysis_per_day_address)
        )
        key = self.quota_key(client, day)
        waited = int(self.redis.eval(TAKE, 1, key, quota, until_midnight + 60))
        if waited >= 0:
            return Asked("quota", retry_after=max(1, min(waited, until_midnight)))
        if not self.redis.set(self.pending_key(game_id), "1", nx=True, ex=PENDING_TTL_S):
            self._refund(key)  # another client's request got there first: this one enqueued nothing
            return Asked("pending")
        try:
            self.queue.enqueue(
                JOB, game_id, job_id=f"analysis-{game_id}", job_timeout=JOB_TIMEOUT_S, result_ttl=0, failure_ttl=3600
            )
        except redis.RedisError:
            self.redis.delete(self.pending_key(game_id))
            self._refund(key)
            raise
        return Asked("pending")

    def _refund(self, key: str) -> None:
        if int(self.redis.decr(key)) < 0:
            self.redis.delete(key)

    def keep(self, game_id: str, result: dict[str, Any]) -> None:
        """Store a computed analysis and lift the mark."""
        self.redis.set(
            self.result_key(game_id), json.dumps(result, separators=(",", ":")), ex=self.settings.analysis_ttl_s
        )
        self.redis.delete(self.pending_key(game_id))

    def release(self, game_id: str) -> None:
        """Lift the mark of a job that failed, so that the next request may enqueue it again."""
        self.redis.delete(self.pending_key(game_id))
