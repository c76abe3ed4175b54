"""``create_app(settings)``: the Flask application factory."""

from __future__ import annotations

import logging
from typing import Any

import redis
from flask import Flask, jsonify
from flask_smorest import Api
from psycopg_pool import ConnectionPool
from rq import Queue
from werkzeug.exceptions import HTTPException

from projections import keys
from schemas.http import ErrorOut
from service import metrics
from service.api import common
from service.config import Settings
from service.errors import ApiError, unavailable
from service.eventstore import EventStore, StoreUnavailable, check_if_idle
from service.games import registry
from service.handlers import GameService

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "token_required",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
}


class QuarterdeckApi(Api):
    # Our one error shape in the generated spec, instead of flask-smorest's.
    ERROR_SCHEMA = ErrorOut


#: Seconds a "drain job queued" flag lives at most (see ``_enqueuer``): a job
#: lost while its flag lives holds up its shard's games this long at most
#: (or until the worker's sweep, every 5 s); while the worker is backlogged
#: longer, a shard gets one more (harmless) job per TTL.
PENDING_TTL = 2

#: After a commit, in one round trip: mark the game dirty; if no drain job is
#: queued or lingering, flag one as queued and answer 1 (the caller enqueues
#: it); if one is lingering, wake it.  Atomic, so a lingering job that stops
#: (``workers.jobs``) cannot miss a commit: either the commit saw the flag and
#: its game is in the set the job drains once more after stopping, or it did
#: not and enqueues a new job.
_MARK = """
redis.call('SADD', KEYS[1], ARGV[1])
local flag = redis.call('GET', KEYS[2])
if not flag then
    redis.call('SET', KEYS[2], 'queued', 'EX', ARGV[2])
    return 1
end
if flag == 'lingering' then
    redis.call('LPUSH', KEYS[3], '1')
    redis.call('LTRIM', KEYS[3], 0, 0)
end
return 0
"""


def _enqueuer(r: redis.Redis, queue_name: str, shards: int):
    queue = Queue(queue_name, connection=r)
    mark = r.register_script(_MARK)

    def enqueue(game_id: str) -> None:
        """After commit: mark the game dirty and make sure a worker drains
        its shard.  If Redis is away the intent still stands; the worker's
        sweep projects it later."""
        try:
            # Coalesce: while a drain job for the shard is queued (not started)
            # or lingering, it will project this game too.  Under load one RQ
            # job projects many games: RQ's own bookkeeping (~30 Redis round
            # trips a job) cost several times a projection (docs/PERFORMANCE.md).
            shard = keys.shard_of(game_id, shards)
            names = [keys.dirty(shard), keys.drain_pending(shard), keys.wake(shard)]
            if mark(keys=names, args=[game_id, PENDING_TTL]):
                queue.enqueue_call("workers.jobs.drain", args=(shard,), result_ttl=0, failure_ttl=3600)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            metrics.ENQUEUE_FAILURES.inc()
            log.warning("projection of %s not enqueued (%s); the sweep will catch up", game_id, exc)

    return enqueue


def create_app(settings: Settings | None = None, **flask_config: Any) -> Flask:
    settings = settings or Settings.from_env()
    app = Flask("quarterdeck")
    app.config.update(
        API_TITLE="Quarterdeck",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        JSON_SORT_KEYS=False,
    )
    app.config.update(flask_config)

    # Connections are made here, never at import; the pool opens in the
    # background so the app starts even while PostgreSQL is still down.
    pool = ConnectionPool(
        settings.database_url,
        min_size=settings.pool_min,
        max_size=settings.pool_max,
        open=False,
        check=check_if_idle,
        # Autocommit: a read is one round trip (no BEGIN, no COMMIT on return to
        # the pool); writes that need a transaction open one explicitly.
        kwargs={"autocommit": True},
        reconnect_timeout=0,
    )
    pool.open(wait=False)
    r = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=1, socket_timeout=5)
    store = EventStore(pool, settings.pool_timeout)
    games = GameService(
        store,
        _enqueuer(r, settings.queue_name, settings.projection_shards),
        cache_size=settings.state_cache_size,
        snapshot_every=settings.snapshot_every,
        on_conflict=metrics.CONFLICTS.inc,
    )
    app.extensions["quarterdeck"] = common.Services(settings, store, r, games)
    # Every engine imported now rather than by the first request that needs
    # one (which would take ~100 ms longer than the rest).
    registry.names()

    api = QuarterdeckApi(
        app,
        spec_kwargs={
            "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        },
    )
    from service.api import audit, games, leaderboards, ops

    for module in (games, audit, leaderboards, ops):
        api.register_blueprint(module.blp)

    app.before_request(common.check_body)
    _register_errors(app)
    return app


def _register_errors(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(err: ApiError):
        return jsonify(err.to_json()), err.status

    @app.errorhandler(StoreUnavailable)
    def store_down(err: StoreUnavailable):
        return api_error(unavailable("postgres", type(err).__name__))

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    def redis_down(err: Exception):
        return api_error(unavailable("redis", type(err).__name__))

    @app.errorhandler(HTTPException)
    def http_error(err: HTTPException):
        status = err.code or 500
        details: dict[str, Any] = {}
        data = getattr(err, "data", None)
        if isinstance(data, dict) and "messages" in data:
            details["fields"] = data["messages"]
        message = err.description or err.name
        if status == 422:
            message = "The request does not match its schema."
        return api_error(ApiError(status, _HTTP_CODES.get(status, "http_error"), message, details))

    @app.errorhandler(Exception)
    def unexpected(err: Exception):
        import psycopg

        if isinstance(err, psycopg.OperationalError):
            return store_down(StoreUnavailable(str(err)))
        log.exception("unhandled error")
        return api_error(ApiError(500, "internal_error", "Something went wrong on our side."))
