"""Rate limits and the expensive-work gate (docs/API.md "Rate limits").

Rate limits are flask-limiter's, counted in Redis (so every API process and
replica shares the counts).  Each request falls in one **budget**, and each
budget has two limits, counted apart: one per client address and one per
credential sent (the bearer token or key, hashed; requests without one count
only by address).  Budgets and their defaults are in ``service/config.py``:

* ``accounts``: registering, organisers, key rotation;
* ``creation``: games and tables created, tables joined and left;
* ``intents``: every other write;
* ``reads``: every other GET (the operator token is never limited);
* ``expensive``: the events feed, time travel, audit and export.

A request over a limit gets ``429 rate_limited`` with ``Retry-After`` and the
usual error body; nothing it asked for happens.  ``QD_RATE_LIMITS=off`` turns
them all off.  If Redis cannot be reached, each process counts in memory
until it is back (a limit never takes the API down with it).

The gate (:func:`expensive`) bounds how many audits, time travels and exports
one process computes at once, whoever asks: rate limits bound one client, the
gate bounds all of them together.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from flask import Flask, current_app, jsonify, request
from flask_limiter import Limit, Limiter, RateLimitExceeded
from werkzeug.middleware.proxy_fix import ProxyFix

from service.config import Settings
from service.http.common import bearer, is_admin
from service.http.errors import ApiError

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


def _budget() -> str | None:
    return budget_of(request.endpoint, request.method)


def client_address() -> str:
    return request.remote_addr or "unknown"


def credential() -> str:
    """The credential sent, hashed (never the credential itself in Redis)."""
    token = bearer()
    return "k:" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:32] if token else ""


def _exempt() -> bool:
    return _budget() is None or is_admin(bearer())


def _limits_of(settings: Settings, per_key: bool) -> Callable[[], str]:
    def provider() -> str:
        budget = _budget()
        if budget is None:
            return ""
        value = getattr(settings, f"limit_{budget}{'_key' if per_key else ''}")
        return "" if value.strip().lower() in ("", "none", "off") else value

    return provider


def init_app(app: Flask, settings: Settings) -> Limiter | None:
    """Install the limits on ``app`` (before the body is even read: a refused
    request costs one Redis round trip per limit)."""
    if settings.trusted_proxies > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    app.extensions[_EXTENSION] = threading.BoundedSemaphore(settings.expensive_concurrency)
    _register_error(app)
    if not settings.rate_limits:
        return None
    limiter = Limiter(
        key_func=client_address,
        default_limits=[
            Limit(
                _limits_of(settings, per_key=False),
                key_function=client_address,
                scope=lambda _endpoint: f"{_budget()}:address",
                shared=True,
                exempt_when=_exempt,
            ),
            Limit(
                _limits_of(settings, per_key=True),
                key_function=credential,
                scope=lambda _endpoint: f"{_budget()}:key",
                shared=True,
                exempt_when=lambda: _exempt() or not bearer(),
            ),
        ],
        storage_uri=settings.redis_url,
        storage_options={"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        # A sliding window: no burst of twice the limit across a window's edge.
        strategy="sliding-window-counter",
        key_prefix="qd",
        # No X-RateLimit-* headers on every answer: each costs Redis round
        # trips; a refusal carries Retry-After (and the same in its body).
        headers_enabled=False,
        # Redis away: count in memory until it is back, never fail the request.
        in_memory_fallback_enabled=True,
        swallow_errors=True,
        # Every limit of a request is counted, so an address over its budget
        # cannot spend a key's (and the reverse) by retrying.
        fail_on_first_breach=False,
    )
    limiter.init_app(app)
    return limiter


def _register_error(app: Flask) -> None:
    @app.errorhandler(RateLimitExceeded)
    def rate_limited(err: RateLimitExceeded):
        limiter: Limiter | None = next(iter(current_app.extensions.get("limiter", ())), None)
        current = limiter.current_limit if limiter is not None else None
        retry = max(1, math.ceil(current.reset_at - time.time())) if current is not None else 1
        budget = _budget()
        body = ApiError(
            429,
            "rate_limited",
            f"Too many requests: the limit is {err.limit.limit} for {budget}. Retry after {retry} s.",
            {"budget": budget, "limit": str(err.limit.limit), "retry_after_seconds": retry},
        )
        resp = jsonify(body.to_json())
        resp.status_code = 429
        # Rounded up: a client that waits this long finds the budget open.
        resp.headers["Retry-After"] = str(retry)
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
