"""Rate limits and the expensive-work gate (docs/API.md "Rate limits").

Each request falls in one **budget**, and each budget has two limits, counted
apart: one per client address and one per credential sent (the bearer token or
key, hashed).  A credential is counted only once it is known to exist (an
account's key, looked up as the handler would; a seat token of the game in the
path, whose hashes each process keeps for the last games asked about): a
made-up token counts only by address, so a flood of them keeps no state per
token in Redis.  Budgets and their defaults are in ``service/config.py``:

* ``accounts``: registering, organisers, key rotation;
* ``creation``: games and tables created, tables joined and left;
* ``intents``: every other write;
* ``reads``: every other GET (the operator token is never limited);
* ``expensive``: the events feed, time travel, audit and export.

A request over a limit gets ``429 rate_limited`` with ``Retry-After`` and the
usual error body; nothing it asked for happens, and it is counted in no window
(one client's script counts all its windows or none; when the other client of
the request refused it, :data:`REFUND` takes it back).  Only accepted requests
spend a budget: a request is counted before it runs (so that concurrent requests
cannot overrun a window) and taken back when it is answered ``4xx``, as long as
its address has refunds left (``QD_LIMIT_REFUNDS``: what a flood of refused
requests can make the service do stays bounded).  ``QD_RATE_LIMITS=off`` turns
them all off.

The counts are the ``limits`` library's sliding-window counters (its notation,
its algorithm and, when Redis cannot be reached, its in-memory storage: each
process counts alone until Redis is back, so a limit never takes the API down
with it).  In Redis, every window of one client (its address, or its
credential) is checked and counted by one script, and both clients' scripts go
in one pipeline: one round trip a request.  A script call per window (four for
an intent, as Flask-Limiter makes them) with the limits resolved in Python on
every request cost more CPU than the intent itself (docs/PERFORMANCE.md, "Rate
limits in one round trip").  Each client's windows share a hash tag, so the
scripts run unchanged on Redis Cluster.

The gate (:func:`expensive`) bounds how many audits, time travels and exports
one process computes at once, whoever asks: rate limits bound one client, the
gate bounds all of them together.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from flask import Flask, Response, current_app, g, jsonify, request
from werkzeug.middleware.proxy_fix import ProxyFix

from service import bootstrap
from service.adapters.rate_limits import RateLimited
from service.config import (
    ACCOUNTS,
    CREATION,
    EXPENSIVE,
    INTENTS,
    READS,
    Settings,
)
from service.domain import identity
from service.domain.tokens import rate_credential, seat_for_token
from service.http.common import bearer, is_admin, principal, services
from service.http.errors import ApiError

if TYPE_CHECKING:
    from service.adapters.rate_limits import RateLimits

log = logging.getLogger(__name__)


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
    """The credential sent, as the rate limits count it (``tokens.rate_credential``)."""
    return rate_credential(token)


def init_app(app: Flask, settings: Settings) -> RateLimits | None:
    """Install the limits on ``app``, checked before anything else of a request
    (before its body is even read: a refused request costs one Redis round trip)."""
    if settings.trusted_proxies > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]  # Flask's way to wrap its app
    app.extensions[_EXTENSION] = threading.BoundedSemaphore(settings.expensive_concurrency)
    _register_error(app)
    if not settings.rate_limits:
        return None
    limits = bootstrap.rate_limits(settings)

    seats = SeatTokens()

    def check() -> None:
        budget = budget_of(request.endpoint, request.method)
        if budget is None:
            return
        token = bearer()
        if is_admin(token):
            return
        known = token is not None and (_is_account_key(token) or seats.holds(token))
        g.qd_reservation = limits.check(budget, client_address(), credential(token) if known else "")

    def refund(response: Response) -> Response:
        # Only accepted requests spend a budget: a refusal is taken back (a 429 of the
        # limits themselves was never counted, so it has no reservation).
        reservation = g.pop("qd_reservation", None)
        if reservation is not None and 400 <= response.status_code < 500:
            limits.refund(reservation)
        return response

    app.before_request(check)
    app.after_request(refund)
    return limits


def _is_account_key(token: str) -> bool:
    """An account's key (looked up once per request: ``principal`` keeps it
    for the handler)."""
    return identity.looks_like_key(token) and principal(token).account is not None


class SeatTokens:
    """Whether a token is a seat's of the game the request names.  A game's
    seat tokens never change once it exists, so each process keeps the
    hashes of the last ``size`` games asked about (a few hundred bytes each)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._hashes: OrderedDict[str, list[bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def holds(self, token: str) -> bool:
        game_id = (request.view_args or {}).get("game_id")
        if game_id is None:
            return False
        gid = str(game_id)
        with self._lock:
            hashes = self._hashes.get(gid)
            if hashes is not None:
                self._hashes.move_to_end(gid)
        if hashes is None:
            hashes = services().store.token_hashes(gid)
            if not hashes:
                return False  # no such game (not kept: nothing to bound it by)
            with self._lock:
                self._hashes[gid] = hashes
                while len(self._hashes) > self.size:
                    self._hashes.popitem(last=False)
        return seat_for_token(token, hashes) is not None


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
            "The server is busy with other audits, exports or analyses; try again shortly.",
            {"retry_after_seconds": 2},
        )
    try:
        yield
    finally:
        gate.release()
