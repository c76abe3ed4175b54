"""API-side Prometheus metrics.  Under gunicorn with several processes, set
``PROMETHEUS_MULTIPROC_DIR`` (``make run`` does) and /metrics aggregates all
processes, the worker's included."""

from __future__ import annotations

import os

from prometheus_client import REGISTRY as DEFAULT_REGISTRY
from prometheus_client import CollectorRegistry, Counter, generate_latest, multiprocess

INTENTS = Counter("qd_intents_total", "Intents answered, by outcome and code", ["outcome", "code"])
CONFLICTS = Counter("qd_version_conflicts_total", "Appends that lost a race for the same version")
ENQUEUE_FAILURES = Counter("qd_enqueue_failures_total", "Projection jobs that could not be enqueued")
DIRECT_LINES = Counter(
    "qd_stream_direct_writes_total",
    "Game stream writes made by the live hub's listener itself (service/http/live/hub.py), by outcome: "
    "whole, or handed back to the stream (a socket that took part of it, or a stream not at the head)",
    ["outcome"],
)


def render() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(DEFAULT_REGISTRY)
