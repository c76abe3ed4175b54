"""Helpers for fault and load tests: the truth read straight from PostgreSQL
(so games can advance while Redis, and with it ``/legal``, is away), a
read-model comparison with a rebuild, and the soak client of
``scripts.soak``."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
import requests
from psycopg_pool import ConnectionPool

from projections import keys
from projections.runner import rebuild_game
from service.adapters.eventstore import EventStore
from service.domain.replay import fold_stream
from service.games import registry

ROOT = Path(__file__).resolve().parents[2]


def load_soak() -> Any:
    """``scripts.soak``, the soak client."""
    from scripts import soak

    return soak


def soak_config(st: Any, admin_token: str, **settings: Any) -> Any:
    """A quiet soak ``Config`` aimed at a private ``stack``'s servers."""
    return load_soak().Config(
        url=st.service.url,
        admin_token=admin_token,
        database_url=st.pg.url(),
        redis_url=st.redis.url(),
        quiet=True,
        **settings,
    )


@contextmanager
def store_for(database_url: str) -> Iterator[EventStore]:
    pool = ConnectionPool(database_url, min_size=1, max_size=4, open=True, reconnect_timeout=0)
    try:
        yield EventStore(pool, 5.0)
    finally:
        pool.close()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(url: str, game: str, players: list[str] | None = None) -> dict[str, Any]:
    resp = requests.post(url + "/v1/games", json={"game": game, "players": players or ["ann", "bob"]}, timeout=30)
    assert resp.status_code == 201, resp.text
    return resp.json()


def next_intent(store: EventStore, game_id: str, rng: random.Random) -> tuple[int, dict[str, Any], int] | None:
    """(seat, a legal intent, stream version) from the stream itself, or None
    once the game has finished."""
    record = store.game(game_id)
    assert record is not None
    engine = registry.get(record.game, record.rules_version)
    events = store.read(game_id)
    state = fold_stream(engine, events)
    if engine.result(state) is not None or not engine.to_act(state):
        return None
    seat = rng.choice(engine.to_act(state))
    return seat, rng.choice(engine.legal(state, seat)).to_json(), events[-1].seq


def advance(url: str, store: EventStore, created: dict[str, Any], n: int, rng: random.Random) -> int:
    """Post ``n`` legal intents over HTTP, choosing them from PostgreSQL (no
    read model needed).  Returns how many were accepted (fewer if the game ends)."""
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    done = 0
    for _ in range(n):
        step = next_intent(store, created["id"], rng)
        if step is None:
            break
        seat, intent, version = step
        resp = requests.post(
            f"{url}/v1/games/{created['id']}/intents",
            json={"intent": intent, "expected_version": version},
            headers=auth(tokens[seat]),
            timeout=30,
        )
        assert resp.status_code == 201, resp.text
        done += 1
    return done


def read_model(r: redis.Redis, game_id: str) -> dict[bytes, bytes]:
    return r.hgetall(keys.game(game_id))


def equals_rebuild(r: redis.Redis, store: EventStore, game_id: str) -> bool:
    """The live read model, then a rebuild from the stream alone: identical?"""
    live = read_model(r, game_id)
    rebuild_game(r, store, game_id)
    return live == read_model(r, game_id)


def assert_logs_clean(log_text: str, database_url: str, extra_secrets: list[str]) -> None:
    """No seat token, operator token or game seed in the processes' logs."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        seeds = [bytes(row[0]).hex() for row in conn.execute("SELECT seed FROM game_seeds")]
    assert seeds, "no games to check the logs against"
    for secret in [*seeds, *extra_secrets]:
        assert secret not in log_text, "a secret is in the service logs"
