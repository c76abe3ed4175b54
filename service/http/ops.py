"""docs/API.md "Service": liveness, readiness, metrics."""

from __future__ import annotations

from flask import Response
from flask_smorest import Blueprint

from schemas.http import HealthOut
from service import metrics
from service.http.common import services

blp = Blueprint("service", __name__, url_prefix="/", description="Health and metrics")


@blp.route("healthz", methods=["GET"])
@blp.response(200, HealthOut)
def healthz() -> dict:
    """The process is up (checks nothing else)."""
    return {"status": "ok"}


@blp.route("readyz", methods=["GET"])
@blp.response(200, HealthOut)
@blp.alt_response(503, schema=HealthOut, description="PostgreSQL or Redis unreachable")
def readyz():
    """PostgreSQL's primary and Redis are both reachable."""
    svc = services()
    checks = {}
    try:
        # The primary: a standby reached (a failover under way) is no more ready than none.
        svc.store.is_primary()
        checks["postgres"] = "ok"
    except Exception as exc:
        checks["postgres"] = f"unavailable: {type(exc).__name__}"
    try:
        # With Redis by role (docs/SCALING.md), the queue's Redis too: one check, both roles.
        svc.components.ping_redis()
        checks["redis"] = "ok"
    except Exception as exc:
        checks["redis"] = f"unavailable: {type(exc).__name__}"
    ok = all(v == "ok" for v in checks.values())
    return {"status": "ok" if ok else "unavailable", "checks": checks}, (200 if ok else 503)


@blp.route("metrics", methods=["GET"])
@blp.response(200, content_type="text/plain")
def prometheus() -> Response:
    """Prometheus text format."""
    return Response(metrics.render(), mimetype="text/plain; version=0.0.4")
