"""The peer: the ``eventsourcing`` library on the same PostgreSQL, in process.

Each command is the library's standard cycle: ``repository.get`` (reload the
aggregate from its events), decide (a method that checks a rule and triggers an
event), ``save`` (INSERT + COMMIT).  The aggregate is small (a turn counter and
a score per seat) and commands go round-robin over many aggregates so that no
aggregate's history grows long — the peer's best case."""

from __future__ import annotations

import time
import uuid
from typing import Any

from psycopg.conninfo import conninfo_to_dict

try:
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event
except ImportError:  # pragma: no cover - eventsourcing is a dev extra
    Application = None  # type: ignore[assignment,misc]


def _classes() -> tuple[type, type]:
    class Table(Aggregate):
        @event("Opened")
        def __init__(self, seats: int) -> None:
            self.turn = 0
            self.scores = [0] * seats

        def play(self, seat: int, points: int) -> None:
            if seat != self.turn % len(self.scores):
                raise ValueError("not your turn")
            self._played(seat, points)

        @event("Played")
        def _played(self, seat: int, points: int) -> None:
            self.turn += 1
            self.scores[seat] += points

    class Tables(Application):
        def open(self, seats: int) -> uuid.UUID:
            table = Table(seats)
            self.save(table)
            return table.id

        def play(self, table_id: uuid.UUID, points: int) -> None:
            table = self.repository.get(table_id)
            table.play(table.turn % len(table.scores), points)
            self.save(table)

    return Table, Tables


def peer_cmd(database_url: str, seconds: float, aggregates: int = 200) -> dict[str, Any]:
    """Commands/s of the peer, one thread."""
    if Application is None:
        return {"error": "eventsourcing is not installed (pip install -e '.[dev]')"}
    params = conninfo_to_dict(database_url)
    _, tables_cls = _classes()
    app = tables_cls(
        env={
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": params.get("dbname", "postgres"),
            "POSTGRES_HOST": params.get("host", "127.0.0.1"),
            "POSTGRES_PORT": str(params.get("port", "5432")),
            "POSTGRES_USER": params.get("user", "postgres"),
            "POSTGRES_PASSWORD": params.get("password", ""),
            "POSTGRES_SCHEMA": "public",
        }
    )
    try:
        ids = [app.open(2) for _ in range(aggregates)]
        for table_id in ids[:20]:  # warm up: connections, statements
            app.play(table_id, 1)
        n = 0
        started = time.perf_counter()
        stop_at = started + seconds
        while time.perf_counter() < stop_at:
            app.play(ids[n % aggregates], 1)
            n += 1
        elapsed = time.perf_counter() - started
        events = 1 + 1 + n // aggregates  # history length of an aggregate at the end, roughly
        return {"rate": n / elapsed, "commands": n, "aggregate_events_at_end": events}
    finally:
        app.close()
