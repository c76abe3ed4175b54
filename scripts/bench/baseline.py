"""Baselines: what this machine's PostgreSQL, and Flask under our gunicorn
set-up, can do for one durable write — the limits our own figures are
compared with."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from scripts.bench.load import LoadResult, closed_loop

#: About the size of one event's data + meta (a few hundred bytes of JSON).
PAYLOAD: dict[str, Any] = {
    "type": "ActionTaken",
    "data": {"seat": 1, "action": "buy", "item": "sub-3", "cost": 7, "cash": [12, 19]},
    "meta": {
        "intent_id": "6f1c2f4e-8a55-4c7e-9d0b-0e5d2b7c9a11",
        "seat": 1,
        "received_at": "2026-11-30T00:00:00.000000Z",
        "intent": {"type": "buy", "item": "sub-3"},
    },
    "hash": "0" * 64,
}


def pg_commit(database_url: str, connections: int, seconds: float) -> float:
    """Single-row INSERT + COMMIT in a loop on each of ``connections``
    connections (one thread each); events/s in total.  Autocommit: the INSERT
    commits by itself, in one round trip — the cheapest durable write."""
    stop_at = time.perf_counter() + 0.3 + seconds
    counts = [0] * connections
    ready = threading.Barrier(connections + 1)

    def run(i: int) -> None:
        with psycopg.connect(database_url, autocommit=True) as conn:
            ready.wait()
            n = 0
            while time.perf_counter() < stop_at:
                conn.execute("INSERT INTO bench_insert (data) VALUES (%s)", (Jsonb(PAYLOAD),))
                n += 1
            counts[i] = n

    threads = [threading.Thread(target=run, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    ready.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - started)


def flask_insert(url: str, clients: int, seconds: float) -> LoadResult:
    def script(_n: int):
        while True:
            yield "/insert", PAYLOAD, None

    return closed_loop(url, clients, seconds, script)
