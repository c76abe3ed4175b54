"""The baseline endpoint of ``make bench``: a minimal Flask app doing one
INSERT+COMMIT per request, served by the same gunicorn set-up as the service
(``gunicorn bench_wsgi:app``).  It is the floor our intent path is compared to:
HTTP + Flask + one durable write, and nothing else."""

from __future__ import annotations

import os

from flask import Flask, request
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from service.config import Settings

_settings = Settings.from_env()
# The service's pool sizes; autocommit, so that the INSERT is its own transaction
# and commits in the same round trip: the cheapest durable write there is.
_pool = ConnectionPool(
    _settings.database_url,
    min_size=_settings.pool_min,
    max_size=_settings.pool_max,
    open=False,
    kwargs={"autocommit": True},
)
_pool.open(wait=False)

app = Flask("bench_baseline")


@app.get("/healthz")
def healthz() -> dict:
    return {"status": "ok", "pid": os.getpid()}


@app.post("/insert")
def insert() -> tuple[dict, int]:
    body = request.get_json()
    with _pool.connection(timeout=_settings.pool_timeout) as conn:
        row = conn.execute("INSERT INTO bench_insert (data) VALUES (%s) RETURNING id", (Jsonb(body),)).fetchone()
    return {"id": row[0] if row else None}, 201
