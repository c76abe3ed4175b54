"""``create_app(settings)``: the Flask application factory."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, jsonify
from flask_smorest import Api, Blueprint
from werkzeug.exceptions import HTTPException

from schemas import openapi
from schemas.http import ErrorOut
from service import metrics, redis_roles, views
from service.adapters.eventstore import StoreUnavailable
from service.bootstrap import Components, announcements, bootstrap, game_service
from service.config import Settings
from service.domain.errors import DomainError
from service.http import (
    accounts,
    analysis,
    audit,
    bots,
    common,
    games,
    invitations,
    leaderboards,
    limits,
    live,
    ops,
    streams,
    tables,
    tournaments,
)
from service.http.errors import ApiError, from_domain, unavailable
from service.http.live.hub import Hub

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


def create_app(settings: Settings | Components | None = None, **flask_config: Any) -> Flask:
    """The WSGI app over ``settings`` (default: the environment), or over
    components already built by the composition root."""
    components = settings if isinstance(settings, Components) else bootstrap(settings)
    settings = components.settings
    app = Flask("quarterdeck")
    app.config.update(
        API_TITLE="Quarterdeck",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        # One byte more than we accept: a chunked body (no Content-Length) is
        # cut at this limit by werkzeug, and a cut body must still be seen to
        # be too large (``common.check_body``), never parsed as if complete.
        MAX_CONTENT_LENGTH=settings.max_body_bytes + 1,
        JSON_SORT_KEYS=False,
    )
    app.config.update(flask_config)

    commands = game_service(components, on_conflict=metrics.CONFLICTS.inc)
    app.extensions["quarterdeck"] = common.Services(components, commands)
    # Waits and streams sleep on the projection's announcements (connects on first use).
    app.extensions[live.EXTENSION] = Hub(announcements(settings))

    api = QuarterdeckApi(
        app,
        spec_kwargs={
            "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        },
    )
    # The typed contract (schemas/openapi.py): before the blueprints, so each
    # of their operations passes through its rules.
    openapi.document(api)
    # Bodies are parsed once, by common.check_body (which also takes a UTF-8 BOM off them).
    parser = Blueprint.ARGUMENTS_PARSER
    parser.__location_map__ = {**type(parser).__location_map__, "json": common.json_body}
    for module in (games, audit, analysis, leaderboards, ops, streams):
        api.register_blueprint(module.blp)
    for module in (accounts, tables, bots, tournaments, invitations):
        api.register_blueprint(module.blp)

    # Rate limits first: a request over its budget is refused before its body is read.
    limits.init_app(app, settings)
    app.before_request(common.check_body)
    _register_errors(app)
    from service.http import pages

    pages.register(app)  # HTML for people; its errors are pages, /v1 keeps JSON
    return app


def _register_errors(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(err: ApiError):
        resp = jsonify(err.to_json())
        wait = err.details.get("retry_after_seconds") if err.status == 503 else None
        if isinstance(wait, int):
            # What a client (or a proxy) reads first: a 503 of a failover, a restart or an
            # exhausted pool says when to come back; an intent is retried with its Idempotency-Key.
            resp.headers["Retry-After"] = str(wait)
        return resp, err.status

    @app.errorhandler(DomainError)
    def domain_error(err: DomainError):
        return api_error(from_domain(err))

    @app.errorhandler(StoreUnavailable)
    def store_down(err: StoreUnavailable):
        return api_error(unavailable("postgres", type(err).__name__))

    def redis_down(err: Exception):
        return api_error(unavailable("redis", type(err).__name__))

    # Redis away, or a Redis Cluster while one of its primaries fails over
    # (docs/SCALING.md, "Redis by role").
    for redis_error in (*redis_roles.DOWN, *redis_roles.CLUSTER_ERRORS):
        app.register_error_handler(redis_error, redis_down)

    @app.errorhandler(views.ReadModelsUnavailable)
    def read_models_down(err: views.ReadModelsUnavailable):
        return api_error(unavailable("redis", err.reason))

    @app.errorhandler(HTTPException)
    def http_error(err: HTTPException):
        status = err.code or 500
        from service.http import pages

        if pages.wants_html():  # a browser outside /v1 (an unknown path): a page, not JSON
            return pages.error_page(status, _HTTP_CODES.get(status, "http_error"), err.description or err.name)
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

        if isinstance(err, (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction)):
            return store_down(StoreUnavailable(str(err)))
        log.exception("unhandled error")
        return api_error(ApiError(500, "internal_error", "Something went wrong on our side."))
