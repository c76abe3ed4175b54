"""Rate limits (docs/API.md "Rate limits"; ``service/http/limits.py``): each
budget bites -- ``429 rate_limited`` with ``Retry-After`` and the usual error
body, nothing written -- and releases after ``Retry-After``; per client
address and per key apart; ``QD_RATE_LIMITS=off`` turns them all off.

The only test module that runs the app with limits on (the suite's settings
turn them off).  Each test speaks from its own client address, so the counts
(in the session's Redis) of one test never reach another."""

from __future__ import annotations

import itertools
import time

import pytest
from support import auth
from support.accounts import register, unique

from projections.runner import project_game
from service.config import Settings
from service.http.app import create_app

WINDOW = 2  # seconds: every limit below is "N per 2 seconds"
_addresses = (f"198.51.100.{i}" for i in itertools.count(1))


@pytest.fixture(scope="module")
def limited(settings):
    application = create_app(
        settings.with_(
            rate_limits=True,
            limit_accounts=f"3 per {WINDOW} second",
            limit_accounts_key="none",
            limit_creation=f"3 per {WINDOW} second",
            limit_creation_key=f"2 per {WINDOW} second",
            limit_intents=f"4 per {WINDOW} second",
            limit_intents_key="100/minute",
            limit_reads=f"5 per {WINDOW} second",
            limit_reads_key=f"3 per {WINDOW} second",
            limit_expensive=f"2 per {WINDOW} second",
            limit_expensive_key="100/minute",
        ),
        TESTING=True,
    )
    yield application
    application.extensions["quarterdeck"].store.pool.close()


def client_from(app, address: str | None = None):
    """A test client whose requests come from ``address`` (a fresh one by default)."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address or next(_addresses)
    return client


def count(ctx, table: str) -> int:
    with ctx.store.pool.connection() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def assert_limited(resp, budget: str) -> int:
    assert resp.status_code == 429, (resp.status_code, resp.get_data(as_text=True)[:300])
    body = resp.get_json()
    assert set(body) == {"error"} and body["error"]["code"] == "rate_limited"
    assert body["error"]["details"]["budget"] == budget
    retry = int(resp.headers["Retry-After"])
    assert 1 <= retry <= WINDOW * 2 and body["error"]["details"]["retry_after_seconds"] == retry
    return retry


def released(send, retry: int) -> None:
    """After ``Retry-After`` the budget serves again."""
    time.sleep(retry)
    deadline = time.monotonic() + WINDOW * 2
    while (resp := send()).status_code == 429:
        assert time.monotonic() < deadline, "the limit did not release"
        time.sleep(0.2)
    assert resp.status_code < 400, resp.get_json()


def test_accounts_budget(limited, ctx):
    c = client_from(limited)
    before = count(ctx, "accounts")
    for _ in range(3):
        assert c.post("/v1/accounts", json={"handle": unique()}).status_code == 201
    retry = assert_limited(c.post("/v1/accounts", json={"handle": unique()}), "accounts")
    assert count(ctx, "accounts") == before + 3
    released(lambda: c.post("/v1/accounts", json={"handle": unique()}), retry)


def test_a_flood_of_creations_gets_429s_and_nothing_more_is_stored(limited, ctx):
    c = client_from(limited)
    before = count(ctx, "games")
    answers = [c.post("/v1/games", json={"game": "nautilus-industries", "players": ["a", "b"]}) for _ in range(30)]
    assert [r.status_code for r in answers[:3]] == [201] * 3
    assert all(r.status_code == 429 for r in answers[3:])
    retry = assert_limited(answers[-1], "creation")
    assert count(ctx, "games") == before + 3
    released(lambda: c.post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}), retry)


def test_creation_per_key_and_tables_share_the_budget(limited, ctx):
    c = client_from(limited)
    _, key = register(client_from(limited))
    tables = count(ctx, "lobby_tables")
    assert c.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(key)).status_code == 201
    assert c.post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}, headers=auth(key)).status_code == 201
    # The key's budget (2) is spent, the address's (3) is not: the key is refused...
    assert_limited(c.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(key)), "creation")
    assert count(ctx, "lobby_tables") == tables + 1
    # ... from any address, while another address without the key is served.
    elsewhere = client_from(limited)
    assert_limited(elsewhere.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(key)), "creation")
    assert elsewhere.post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}).status_code == 201
    assert count(ctx, "lobby_tables") == tables + 1


def test_intents_budget(limited, ctx):
    game = client_from(limited).post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}).get_json()
    token = game["seats"][0]["token"]
    c = client_from(limited)
    before = ctx.store.version(game["id"])
    bad = {"intent": {"type": "no_such_intent"}}
    for _ in range(4):
        assert c.post(f"/v1/games/{game['id']}/intents", json=bad, headers=auth(token)).status_code == 422
    retry = assert_limited(c.post(f"/v1/games/{game['id']}/intents", json=bad, headers=auth(token)), "intents")
    assert ctx.store.version(game["id"]) == before
    released(lambda: c.get("/v1/leaderboards"), 0)  # another budget is untouched
    time.sleep(retry)
    deadline = time.monotonic() + WINDOW * 2
    while (resp := c.post(f"/v1/games/{game['id']}/intents", json=bad, headers=auth(token))).status_code == 429:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert resp.status_code == 422


def test_reads_per_address_and_per_key(limited):
    c = client_from(limited)
    _, ann = register(client_from(limited))
    _, bob = register(client_from(limited))
    for _ in range(3):
        assert c.get("/v1/account", headers=auth(ann)).status_code == 200
    # Ann's key is spent; Bob's key, from the same address, is not.
    retry = assert_limited(c.get("/v1/account", headers=auth(ann)), "reads")
    assert c.get("/v1/account", headers=auth(bob)).status_code == 200
    # Now the address is spent (5 reads: a refused request counts too, so
    # hammering after a 429 does not help), for everyone there.
    assert_limited(c.get("/v1/leaderboards"), "reads")
    assert client_from(limited).get("/v1/leaderboards").status_code == 200
    released(lambda: c.get("/v1/account", headers=auth(ann)), max(retry, 1))


def test_expensive_budget(limited, ctx):
    game = client_from(limited).post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}).get_json()
    project_game(ctx.redis, ctx.store, game["id"])
    c = client_from(limited)
    for _ in range(2):
        assert c.get(f"/v1/games/{game['id']}/events").status_code == 200
    retry = assert_limited(c.get(f"/v1/games/{game['id']}/events"), "expensive")
    assert c.get(f"/v1/games/{game['id']}").status_code == 200  # reads are another budget
    released(lambda: c.get(f"/v1/games/{game['id']}/events"), retry)


def test_the_operator_and_health_checks_are_never_limited(limited, settings):
    c = client_from(limited)
    for _ in range(12):
        assert c.get("/v1/leaderboards", headers=auth(settings.admin_token)).status_code == 200
        assert c.get("/healthz").status_code == 200
        assert c.get("/readyz").status_code == 200


def test_limits_off_turn_every_limit_off(settings):
    assert Settings.from_env({"QD_RATE_LIMITS": "off"}).rate_limits is False
    assert Settings.from_env({}).rate_limits is True
    app = create_app(settings.with_(rate_limits=False, limit_reads="1 per hour", limit_creation="1 per hour"))
    try:
        c = client_from(app)
        assert all(c.get("/v1/leaderboards").status_code == 200 for _ in range(5))
    finally:
        app.extensions["quarterdeck"].store.pool.close()
