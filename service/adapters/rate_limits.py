"""The rate limits' counters in Redis (docs/API.md "Rate limits"; the budgets, the
one-round-trip scripts and the in-memory fallback are described in
``service/http/limits.py``, which checks them before each request)."""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import redis
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import SlidingWindowCounterRateLimiter

from service import redis_roles
from service.config import (
    BUDGETS,
    Settings,
)

log = logging.getLogger(__name__)
#: What makes the limits count in memory for a while: any Redis error, a cluster failing over included.
_REDIS_FAILURES: tuple[type[Exception], ...] = (redis.RedisError, *redis_roles.CLUSTER_ERRORS)


#: One client's windows, checked and counted together (``limits``' sliding-window
#: counter, as its own ``acquire_sliding_window.lua`` does for one window, with the
#: reset time its ``get_window_stats`` gives a refused one).  ``acquire(keys, args)``:
#: keys, each window's previous and current counter; args, each window's amount and
#: length in seconds.  Returns, per window, -1 if the request fits in it, else the
#: milliseconds until it frees a request, and whether it fitted.  All or nothing: the
#: request is counted in every window only if it fits in every one of them (a refused
#: request spends no budget).
_ACQUIRE_FUNCTION = """
local function acquire(keys, args)
  local out, fits = {}, true
  for i = 1, #args / 2 do
    local previous_key, current_key = keys[2 * i - 1], keys[2 * i]
    local limit = tonumber(args[2 * i - 1])
    local expiry = tonumber(args[2 * i]) * 1000
    local current_ttl = tonumber(redis.call('pttl', current_key))
    if current_ttl > 0 and current_ttl < expiry then
      -- the current window has ended: it becomes the previous one
      redis.call('rename', current_key, previous_key)
      redis.call('set', current_key, 0, 'PX', current_ttl + expiry)
    end
    local previous_count = tonumber(redis.call('get', previous_key)) or 0
    local previous_ttl = math.max(0, tonumber(redis.call('pttl', previous_key)))
    local current_count = tonumber(redis.call('get', current_key)) or 0
    current_ttl = math.max(0, tonumber(redis.call('pttl', current_key)))
    local weighted = math.floor(previous_count * previous_ttl / expiry) + current_count
    if limit >= 1 and weighted + 1 <= limit then
      out[i] = -1
    else
      fits = false
      local reset = math.huge
      if previous_count > 0 then reset = math.min(reset, previous_ttl % (expiry / previous_count)) end
      if current_count > 0 then reset = math.min(reset, current_ttl % expiry) end
      if reset == math.huge then reset = 0 end
      out[i] = math.floor(reset)
    end
  end
  if fits then
    for i = 1, #args / 2 do
      local current_key = keys[2 * i]
      if redis.call('exists', current_key) == 1 then
        redis.call('incrby', current_key, 1)
      else
        redis.call('set', current_key, 1, 'PX', tonumber(args[2 * i]) * 2000)
      end
    end
  end
  return out, fits
end
"""

#: KEYS, ARGV: as ``acquire``'s.  Returns its answer per window.
ACQUIRE = (
    _ACQUIRE_FUNCTION
    + """
local out = acquire(KEYS, ARGV)
return out
"""
)

#: Takes back a request counted for one client (its windows' current counters: the
#: last KEYS), when another client of the same request was refused (ARGV: just 0), or
#: when the request was refused after it was counted (a 4xx answer): then the first
#: 2 * ARGV[1] KEYS and the next ARGV are the refunds' windows (as ``acquire``'s), and
#: the request is taken back only if it fits in them.  Returns 1 if it was taken back.
#: A window that ended meanwhile has moved its count to the previous counter, which is
#: left to age out: the refund is then partial, never more than the request.
REFUND = (
    _ACQUIRE_FUNCTION
    + """
local n = tonumber(ARGV[1])
if n > 0 then
  local keys, args = {}, {}
  for i = 1, 2 * n do
    keys[i] = KEYS[i]
    args[i] = ARGV[i + 1]
  end
  local _, fits = acquire(keys, args)
  if not fits then return 0 end
end
for i = 2 * n + 1, #KEYS do
  if (tonumber(redis.call('get', KEYS[i])) or 0) > 0 then redis.call('decrby', KEYS[i], 1) end
end
return 1
"""
)

#: The pseudo-budget that bounds how many refused requests one address gets back.
REFUNDS = "refunds"


@dataclass(frozen=True)
class Reservation:
    """A request counted in its budget's windows (:meth:`RateLimits.check`), to take back
    if it is refused (:meth:`RateLimits.refund`)."""

    budget: str
    address: str
    key: str


class RateLimited(Exception):
    """A request over one of its budget's limits (answered 429 by the app)."""

    def __init__(self, budget: str, item: RateLimitItem, retry_after: int):
        super().__init__(f"{budget}: {item}")
        self.budget, self.item, self.retry_after = budget, item, retry_after


@dataclass(frozen=True)
class _Window:
    """One limit of a budget for one kind of client (``per_key``)."""

    budget: str
    per_key: bool
    item: RateLimitItem

    @functools.cached_property
    def suffix(self) -> str:
        return f"{self.budget}:{'key' if self.per_key else 'address'}:{self.item.amount}/{self.item.get_expiry()}"


class RateLimits:
    """The budgets of ``settings``, counted in Redis (``read_url``) in one round trip
    a request, or in this process's memory while Redis cannot be reached."""

    #: Seconds without Redis after a failure, doubling up to :data:`MAX_BACKOFF`.
    FIRST_BACKOFF, MAX_BACKOFF = 1.0, 30.0

    def __init__(self, settings: Settings, client: Any, prefix: str = "qd:rl"):
        """``client``: the read side's Redis with short timeouts (``bootstrap.rate_limits``)."""
        self.prefix = prefix
        self.redis = client
        # Loaded on first use (and again after a Redis restart): see _in_redis.
        self.sha = hashlib.sha1(ACQUIRE.encode()).hexdigest()
        self.windows: dict[tuple[str, bool], tuple[_Window, ...]] = {
            (budget, per_key): tuple(_Window(budget, per_key, item) for item in _parse(settings, budget, per_key))
            for budget in BUDGETS
            for per_key in (False, True)
        }
        self.refund_windows = tuple(_Window(REFUNDS, False, item) for item in _parse_value(settings.limit_refunds))
        self.memory_storage = MemoryStorage()
        self.memory = SlidingWindowCounterRateLimiter(self.memory_storage)
        self._lock = threading.Lock()
        self._redis_after = 0.0
        self._backoff = self.FIRST_BACKOFF

    def check(self, budget: str, address: str, key: str) -> Reservation | None:
        """Count a request of ``budget`` from ``address`` (and credential ``key``,
        "" for none) in every window; :class:`RateLimited` if any is full.  The
        request is counted before it runs, so concurrent requests never overrun a
        window; what is returned takes it back if it is refused (:meth:`refund`)."""
        clients = self._clients(budget, address, key)
        if not clients:
            return None
        if time.monotonic() >= self._redis_after:
            try:
                resets = self._in_redis(clients)
            except _REDIS_FAILURES:
                self._redis_failed()
            else:
                self._backoff = self.FIRST_BACKOFF
                self._verdict(clients, resets)
                return Reservation(budget, address, key)
        self._verdict(clients, self._in_memory(clients))
        return Reservation(budget, address, key)

    def refund(self, reservation: Reservation) -> bool:
        """Take back a request that was counted and then refused (a ``4xx`` answer: only
        accepted requests spend a budget), from every window it was counted in, as long
        as its address has refunds left (``QD_LIMIT_REFUNDS``; beyond, a refusal counts
        like an accepted request, so a flood of refused requests stays bounded by the
        budgets).  Whether it was taken back."""
        clients = self._clients(reservation.budget, reservation.address, reservation.key)
        if not clients:
            return False
        if time.monotonic() >= self._redis_after:
            try:
                return self._refund_in_redis(reservation.address, clients)
            except _REDIS_FAILURES:
                self._redis_failed()
        return self._refund_in_memory(reservation.address, clients)

    def _clients(self, budget: str, address: str, key: str) -> list[tuple[str, tuple[_Window, ...]]]:
        clients = [(f"a:{address}", self.windows[budget, False])]
        if key:
            clients.append((key, self.windows[budget, True]))
        return [(who, windows) for who, windows in clients if windows]

    def _current(self, who: str, w: _Window) -> str:
        return f"{self.prefix}:{{{who}}}:{w.suffix}"

    def _refund_in_redis(self, address: str, clients: list[tuple[str, tuple[_Window, ...]]]) -> bool:
        # The address's refunds share its hash tag: checked and taken back in one script.
        who = f"a:{address}"
        keys: list[str] = []
        args: list[int] = [len(self.refund_windows)]
        for w in self.refund_windows:
            current = self._current(who, w)
            keys += (f"{current}/-1", current)
            args += (w.item.amount, w.item.get_expiry())
        own = dict(clients).get(who, ())
        if not self.redis.eval(REFUND, len(keys) + len(own), *keys, *[self._current(who, w) for w in own], *args):
            return False
        for other, windows in clients:
            if other != who:
                theirs = [self._current(other, w) for w in windows]
                self.redis.eval(REFUND, len(theirs), *theirs, 0)
        return True

    def _refund_in_memory(self, address: str, clients: list[tuple[str, tuple[_Window, ...]]]) -> bool:
        who = f"a:{address}"
        if not all(self.memory.test(w.item, who, w.suffix) for w in self.refund_windows):
            return False
        for w in self.refund_windows:
            self.memory.hit(w.item, who, w.suffix)
        storage = self.memory_storage
        for other, windows in clients:
            for w in windows:
                expiry = w.item.get_expiry()
                _, current = storage.sliding_window_keys(w.item.key_for(other, w.suffix), expiry, time.time())
                storage.decr(current)
        return True

    def _in_redis(self, clients: list[tuple[str, tuple[_Window, ...]]]) -> list[list[int]]:
        calls = []
        for who, windows in clients:
            keys: list[str] = []
            args: list[int] = []
            for w in windows:
                current = self._current(who, w)
                keys += (f"{current}/-1", current)
                args += (w.item.amount, w.item.get_expiry())
            calls.append((keys, args))
        try:
            resets = self._pipelined(calls)
        except redis.exceptions.NoScriptError:  # a new Redis, or one that flushed its scripts
            self.redis.script_load(ACQUIRE)
            resets = self._pipelined(calls)
        if any(ms >= 0 for got in resets for ms in got):
            # Refused: take the request back from the clients that counted it.
            counted = [keys[1::2] for (keys, _), got in zip(calls, resets, strict=True) if all(ms < 0 for ms in got)]
            if counted:
                with self.redis.pipeline(transaction=False) as pipe:
                    for refunded in counted:
                        pipe.eval(REFUND, len(refunded), *refunded, 0)
                    pipe.execute()
        return resets

    def _pipelined(self, calls: list[tuple[list[str], list[int]]]) -> list[list[int]]:
        # EVALSHA itself, not Script objects: a pipeline of Scripts asks SCRIPT EXISTS first.
        with self.redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                pipe.evalsha(self.sha, len(keys), *keys, *args)
            return pipe.execute()

    def _in_memory(self, clients: list[tuple[str, tuple[_Window, ...]]]) -> list[list[int]]:
        out = []
        for who, windows in clients:
            resets = []
            for w in windows:
                if self.memory.test(w.item, who, w.suffix):
                    resets.append(-1)
                else:
                    reset_at = self.memory.get_window_stats(w.item, who, w.suffix).reset_time
                    resets.append(max(0, int((reset_at - time.time()) * 1000)))
            out.append(resets)
        if all(ms < 0 for got in out for ms in got):
            # Counted only when every window of every client has room, as in Redis.
            for who, windows in clients:
                for w in windows:
                    self.memory.hit(w.item, who, w.suffix)
        return out

    def _redis_failed(self) -> None:
        with self._lock:
            log.warning("rate limits: Redis unreachable; counting in memory for %.0f s", self._backoff)
            self._redis_after = time.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, self.MAX_BACKOFF)

    @staticmethod
    def _verdict(clients: list[tuple[str, tuple[_Window, ...]]], resets: list[list[int]]) -> None:
        """A refused request is counted in no window (hammering after a 429 spends
        nothing, so one buggy client cannot lock its address out for a day); the
        longest wait among the full ones is the answer's ``Retry-After``: a client
        that waits that long finds the budget open."""
        full = [
            (ms, w)
            for (_, windows), got in zip(clients, resets, strict=True)
            for w, ms in zip(windows, got, strict=True)
            if ms >= 0
        ]
        if full:
            ms, w = max(full, key=lambda f: f[0])
            raise RateLimited(w.budget, w.item, max(1, math.ceil(ms / 1000)))


def _parse(settings: Settings, budget: str, per_key: bool) -> list[RateLimitItem]:
    return _parse_value(getattr(settings, f"limit_{budget}{'_key' if per_key else ''}"))


def _parse_value(value: str) -> list[RateLimitItem]:
    return [] if value.strip().lower() in ("", "none", "off") else parse_many(value)
