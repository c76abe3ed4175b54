"""Rate limits and the expensive-work gate (docs/API.md "Rate limits").

Each request falls in one **budget**, and each budget has two limits, counted
apart: one per client address and one per credential sent (the bearer token or
key, hashed; requests without one count only by address).  Budgets and their
defaults are in ``service/config.py``:

* ``accounts``: registering, organisers, key rotation;
* ``creation``: games and tables created, tables joined and left;
* ``intents``: every other write;
* ``reads``: every other GET (the operator token is never limited);
* ``expensive``: the events feed, time travel, audit and export.

A request over a limit gets ``429 rate_limited`` with ``Retry-After`` and the
usual error body; nothing it asked for happens.  ``QD_RATE_LIMITS=off`` turns
them all off.

The counts are the ``limits`` library's sliding-window counters (its notation,
its algorithm and, when Redis cannot be reached, its in-memory storage: each
process counts alone until Redis is back, so a limit never takes the API down
with it).  In Redis, every window of one client (its address, or its
credential) is checked and counted by one script, and both clients' scripts go
in one pipeline: one round trip a request.  Flask-Limiter, which we used
before, sent one script call per window (four for an intent) and resolved its
limits in Python on every request: 1.0-1.4 ms of CPU an intent, more than the
intent itself (docs/PERFORMANCE.md, "Tenth session").  Each client's windows
share a hash tag, so the scripts run unchanged on Redis Cluster.

The gate (:func:`expensive`) bounds how many audits, time travels and exports
one process computes at once, whoever asks: rate limits bound one client, the
gate bounds all of them together.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import redis
from flask import Flask, Response, current_app, jsonify, request
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import SlidingWindowCounterRateLimiter
from werkzeug.middleware.proxy_fix import ProxyFix

from service import redis_roles
from service.config import Settings
from service.http.common import bearer, is_admin
from service.http.errors import ApiError

log = logging.getLogger(__name__)

ACCOUNTS, CREATION, INTENTS, READS, EXPENSIVE = "accounts", "creation", "intents", "reads", "expensive"
BUDGETS = (ACCOUNTS, CREATION, INTENTS, READS, EXPENSIVE)

#: Endpoints whose budget is not the default of their method (GET: reads;
#: others: intents).  A new blueprint's endpoint lands in the default of its
#: method unless listed here.
ENDPOINT_BUDGETS = {
    "accounts.register": ACCOUNTS,
    "accounts.create_organiser": ACCOUNTS,
    "accounts.rotate_key": ACCOUNTS,
    "games.create_game": CREATION,
    "tables.create_table": CREATION,
    "tables.join_table": CREATION,
    "tables.leave_table": CREATION,
    "audit.events_feed": EXPENSIVE,
    "audit.state_at": EXPENSIVE,
    "audit.audit_game": EXPENSIVE,
    "audit.export_game": EXPENSIVE,
    "tournaments.create_tournament": CREATION,
    "tournaments.register_players": CREATION,
    "tournaments.start_tournament": CREATION,
    "tournaments.audit": EXPENSIVE,
    "tournaments.export": EXPENSIVE,
}
#: Blueprints never limited: health, readiness and metrics (load balancers
#: and monitoring call them).
EXEMPT_BLUEPRINTS = frozenset({"service"})

_EXTENSION = "quarterdeck_limits"


def budget_of(endpoint: str | None, method: str) -> str | None:
    """The budget of a request, or ``None`` if it is not limited."""
    if not endpoint or endpoint.split(".")[0] in EXEMPT_BLUEPRINTS:
        return None
    if endpoint in ENDPOINT_BUDGETS:
        return ENDPOINT_BUDGETS[endpoint]
    return READS if method in ("GET", "HEAD", "OPTIONS") else INTENTS


def client_address() -> str:
    return request.remote_addr or "unknown"


def credential(token: str | None) -> str:
    """The credential sent, hashed (never the credential itself in Redis); "" for none."""
    return "k:" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:32] if token else ""


#: One client's windows, checked and counted together (``limits``' sliding-window
#: counter, as its own ``acquire_sliding_window.lua`` does for one window, with the
#: reset time its ``get_window_stats`` gives a refused one).  KEYS: each window's
#: previous and current counter; ARGV: each window's amount and length in seconds.
#: Returns, per window, -1 if the request was counted in it, else the milliseconds
#: until it frees a request (the request is not counted in a window it does not fit).
ACQUIRE = """
local out = {}
for i = 1, #ARGV / 2 do
  local previous_key, current_key = KEYS[2 * i - 1], KEYS[2 * i]
  local limit = tonumber(ARGV[2 * i - 1])
  local expiry = tonumber(ARGV[2 * i]) * 1000
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
    if redis.call('exists', current_key) == 1 then
      redis.call('incrby', current_key, 1)
    else
      redis.call('set', current_key, 1, 'PX', expiry * 2)
    end
    out[i] = -1
  else
    local reset = math.huge
    if previous_count > 0 then reset = math.min(reset, previous_ttl % (expiry / previous_count)) end
    if current_count > 0 then reset = math.min(reset, current_ttl % expiry) end
    if reset == math.huge then reset = 0 end
    out[i] = math.floor(reset)
  end
end
return out
"""


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

    def __init__(self, settings: Settings, prefix: str = "qd:rl"):
        self.prefix = prefix
        # Short timeouts: a limit must not hold a request for long when Redis is away.
        self.redis = redis_roles.connect_one(settings.read_url, socket_connect_timeout=0.5, socket_timeout=0.5)
        # Loaded on first use (and again after a Redis restart): see _in_redis.
        self.sha = hashlib.sha1(ACQUIRE.encode()).hexdigest()
        self.windows: dict[tuple[str, bool], tuple[_Window, ...]] = {
            (budget, per_key): tuple(_Window(budget, per_key, item) for item in _parse(settings, budget, per_key))
            for budget in BUDGETS
            for per_key in (False, True)
        }
        self.memory = SlidingWindowCounterRateLimiter(MemoryStorage())
        self._lock = threading.Lock()
        self._redis_after = 0.0
        self._backoff = self.FIRST_BACKOFF

    def check(self, budget: str, address: str, key: str) -> None:
        """Count a request of ``budget`` from ``address`` (and credential ``key``,
        "" for none) in every window; :class:`RateLimited` if any is full."""
        clients = [(f"a:{address}", self.windows[budget, False])]
        if key:
            clients.append((key, self.windows[budget, True]))
        clients = [(who, windows) for who, windows in clients if windows]
        if not clients:
            return
        if time.monotonic() >= self._redis_after:
            try:
                resets = self._in_redis(clients)
            except (redis.RedisError, *redis_roles.CLUSTER_ERRORS):
                self._redis_failed()
            else:
                self._backoff = self.FIRST_BACKOFF
                return self._verdict(clients, resets)
        self._verdict(clients, self._in_memory(clients))

    def _in_redis(self, clients: list[tuple[str, tuple[_Window, ...]]]) -> list[list[int]]:
        calls = []
        for who, windows in clients:
            keys: list[str] = []
            args: list[int] = []
            for w in windows:
                current = f"{self.prefix}:{{{who}}}:{w.suffix}"
                keys += (f"{current}/-1", current)
                args += (w.item.amount, w.item.get_expiry())
            calls.append((keys, args))
        try:
            return self._pipelined(calls)
        except redis.exceptions.NoScriptError:  # a new Redis, or one that flushed its scripts
            self.redis.script_load(ACQUIRE)
            return self._pipelined(calls)

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
                if self.memory.hit(w.item, who, w.suffix):
                    resets.append(-1)
                else:
                    reset_at = self.memory.get_window_stats(w.item, who, w.suffix).reset_time
                    resets.append(max(0, int((reset_at - time.time()) * 1000)))
            out.append(resets)
        return out

    def _redis_failed(self) -> None:
        with self._lock:
            log.warning("rate limits: Redis unreachable; counting in memory for %.0f s", self._backoff)
            self._redis_after = time.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, self.MAX_BACKOFF)

    @staticmethod
    def _verdict(clients: list[tuple[str, tuple[_Window, ...]]], resets: list[list[int]]) -> None:
        """Every window has counted the request it could hold (a refused request counts
        too, so hammering does not help); the longest wait among the full ones is the
        answer's ``Retry-After``: a client that waits that long finds the budget open."""
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
    value = getattr(settings, f"limit_{budget}{'_key' if per_key else ''}")
    return [] if value.strip().lower() in ("", "none", "off") else parse_many(value)


def init_app(app: Flask, settings: Settings) -> RateLimits | None:
    """Install the limits on ``app``, checked before anything else of a request
    (before its body is even read: a refused request costs one Redis round trip)."""
    if settings.trusted_proxies > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    app.extensions[_EXTENSION] = threading.BoundedSemaphore(settings.expensive_concurrency)
    _register_error(app)
    if not settings.rate_limits:
        return None
    limits = RateLimits(settings)

    def check() -> None:
        budget = budget_of(request.endpoint, request.method)
        if budget is None:
            return
        token = bearer()
        if is_admin(token):
            return
        limits.check(budget, client_address(), credential(token))

    app.before_request(check)
    return limits


def _register_error(app: Flask) -> None:
    @app.errorhandler(RateLimited)
    def rate_limited(err: RateLimited) -> Response:
        body = ApiError(
            429,
            "rate_limited",
            f"Too many requests: the limit is {err.item} for {err.budget}. Retry after {err.retry_after} s.",
            {"budget": err.budget, "limit": str(err.item), "retry_after_seconds": err.retry_after},
        )
        resp = jsonify(body.to_json())
        resp.status_code = 429
        resp.headers["Retry-After"] = str(err.retry_after)
        return resp


@contextmanager
def expensive() -> Iterator[None]:
    """Hold one of the process's slots for expensive work, waiting for one at
    most ``expensive_wait_seconds``; then ``503 busy``."""
    from service.http.common import services

    gate: threading.BoundedSemaphore = current_app.extensions[_EXTENSION]
    wait = services().settings.expensive_wait_seconds
    if not gate.acquire(timeout=wait):
        raise ApiError(
            503,
            "busy",
            "The server is busy with other audits and exports; try again shortly.",
            {"retry_after_seconds": 2},
        )
    try:
        yield
    finally:
        gate.release()
