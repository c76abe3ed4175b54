"""Phase ``minimum`` of ``make bench``: the design's minimum for an intent, under the
load of ``api_intents_16`` (servers in ``scripts/bench/minimum_serve.py``).

``minimum_intents_16`` is the rate 16 keep-alive clients reach against it, and
``cpu_ms_per_minimum_intent`` what each of its requests costs its gunicorn, its worker
and PostgreSQL (the projection's backlog drained, as for ``cpu_ms_per_intent``).  Its
ratio to ``flask_insert_16``, ``api_ratio_bound``, is the highest ``api_intents_16 /
flask_insert_16`` any implementation of the design can reach on this machine with this
HTTP stack: the service does all of this and more."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import redis

from scripts.bench.load import LoadResult, closed_loop
from scripts.bench.minimum_serve import TABLE

#: About the size of a bench intent's body.
INTENT: dict[str, Any] = {"type": "buy_parts", "parts": ["hull", "engine"], "from": "warehouse", "seat": 1}


def prepare(database_url: str) -> None:
    """``minimum_events``: ``events``' columns, checks and indexes, and its foreign key."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.execute(f"CREATE TABLE {TABLE} (LIKE events INCLUDING ALL)")
        conn.execute(f"ALTER TABLE {TABLE} ADD FOREIGN KEY (game_id) REFERENCES games (game_id)")


def drop(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


def worker_argv() -> list[str]:
    return [sys.executable, "-m", "scripts.bench.minimum_serve"]


class Load:
    """16 clients, each appending to its own games in turn; every game's version kept."""

    def __init__(self, games: list[str], clients: int):
        self.games, self.clients = games, clients
        self.versions = dict.fromkeys(games, 0)  # minimum_events starts empty
        self.accepted = 0  # every 201, warm-up included (its CPU is counted too)

    def script(self, n: int) -> Iterator[tuple[str, Any, str | None]]:
        mine = self.games[n :: self.clients]
        i = 0
        while mine:
            g = mine[i % len(mine)]
            i += 1
            status, answer, _t1 = yield f"/append/{g}", {"intent": INTENT, "expected_version": self.versions[g]}, None
            if status == 201:
                self.versions[g] = answer["version"]
                self.accepted += 1
            else:
                mine.remove(g)

    def run(self, url: str, seconds: float) -> LoadResult:
        return closed_loop(url, self.clients, seconds, self.script)

    def wait_projected(self, r: redis.Redis, timeout: float = 60.0) -> float:
        """Seconds until the worker shows every game at its last accepted version."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            with r.pipeline(transaction=False) as pipe:
                for g in self.games:
                    pipe.hget(f"min:{{{g}}}", "version")
                seen = pipe.execute()
            if all(v is not None and int(v) >= self.versions[g] for g, v in zip(self.games, seen, strict=True)):
                return time.monotonic() - started
            time.sleep(0.01)
        raise TimeoutError(f"the minimum's worker did not project every game within {timeout:g} s")
