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
    # The key's refusals spent nothing of the address's budget: its third request is served.
    assert c.post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}).status_code == 201
    assert_limited(c.post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}), "creation")


def test_intents_budget(limited, ctx):
    *games, fresh = [
        client_from(limited).post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}).get_json()
        for _ in range(4)
    ]
    game = games[-1]
    token = game["seats"][0]["token"]
    c = client_from(limited)
    resign = {"intent": {"type": "resign"}}
    # Accepted intents spend the budget (4 per address): a resignation in each game,
    # then two refusals (a finished game: 422) that are taken back.
    for g in games:
        assert (
            c.post(f"/v1/games/{g['id']}/intents", json=resign, headers=auth(g["seats"][1]["token"])).status_code == 201
        )
    for _ in range(2):
        assert c.post(f"/v1/games/{game['id']}/intents", json=resign, headers=auth(token)).status_code == 422
    bad = {"intent": {"type": "no_such_intent"}}
    assert c.post(f"/v1/games/{game['id']}/intents", json=bad, headers=auth(token)).status_code == 422
    seat = auth(fresh["seats"][0]["token"])
    assert c.post(f"/v1/games/{fresh['id']}/intents", json=resign, headers=seat).status_code == 201
    before = ctx.store.version(fresh["id"])
    retry = assert_limited(c.post(f"/v1/games/{fresh['id']}/intents", json=bad, headers=seat), "intents")
    assert ctx.store.version(fresh["id"]) == before
    released(lambda: c.get("/v1/leaderboards"), 0)  # another budget is untouched
    time.sleep(retry)
    deadline = time.monotonic() + WINDOW * 2
    while (resp := c.post(f"/v1/games/{fresh['id']}/intents", json=bad, headers=seat)).status_code == 429:
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
    # The refused read was taken back from the address too (a refused request
    # spends no budget): 4 of its 5 are spent, then it is spent for everyone there.
    assert c.get("/v1/leaderboards").status_code == 200
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


def test_a_burst_of_refused_requests_spends_no_budget(settings, ctx):
    """docs/API.md "Rate limits": a refused request is counted in no window.  A
    600-request burst against "20/minute;500/day" got 20 games, then counted its
    580 refusals in the day's window and locked the address out for 24 hours."""
    app = create_app(
        settings.with_(
            rate_limits=True, limit_creation=f"3 per {WINDOW} second;10 per hour", limit_creation_key="none"
        ),
        TESTING=True,
    )
    try:
        c = client_from(app)
        before = count(ctx, "games")
        body = {"game": "nauticus", "players": ["a", "b"]}
        answers = [c.post("/v1/games", json=body) for _ in range(40)]
        assert [r.status_code for r in answers].count(201) == 3
        assert count(ctx, "games") == before + 3
        # Every refusal is the short window's: the hour's holds only the 3 served.
        assert max(assert_limited(r, "creation") for r in answers if r.status_code == 429) <= WINDOW
        released(lambda: c.post("/v1/games", json=body), WINDOW)
    finally:
        app.extensions["quarterdeck"].store.pool.close()


def test_a_flood_of_unknown_credentials_creates_no_rate_limit_state(limited, ctx):
    """docs/API.md "Rate limits": a credential is counted apart only once it is
    known to exist.  Every random bearer token got windows of its own (10,022
    keys after 5,000 requests, kept 48 h): now only the address's are kept,
    however many tokens come."""
    import secrets

    r = ctx.redis

    def credential_keys() -> set[bytes]:
        return set(r.scan_iter(match="qd:rl:{k:*", count=1000))

    game = client_from(limited).post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}).get_json()
    gid = game["id"]
    project_game(ctx.redis, ctx.store, gid)
    before = credential_keys()
    address = next(_addresses)
    c = client_from(limited, address)
    statuses = set()
    for _ in range(150):
        token = secrets.token_urlsafe(24)
        key = "qdk_" + secrets.token_urlsafe(24)
        statuses.add(c.get("/v1/account", headers=auth(key)).status_code)
        statuses.add(c.get(f"/v1/games/{gid}", headers=auth(token)).status_code)
        statuses.add(c.post(f"/v1/games/{gid}/intents", json={"intent": {}}, headers=auth(token)).status_code)
        statuses.add(
            c.get(f"/v1/games/{secrets.token_hex(16)[:8]}-0000-4000-8000-000000000000", headers=auth(token)).status_code
        )
    assert 429 in statuses
    assert credential_keys() - before == set()
    # The address's own windows: two counters per window of the budgets it used, whatever the flood's size.
    assert len(set(r.scan_iter(match=f"qd:rl:{{a:{address}}}:*", count=1000))) <= 2 * 5
    # A real seat token is counted apart, as before.
    c.get(f"/v1/games/{gid}", headers=auth(game["seats"][0]["token"]))
    assert len(credential_keys() - before) >= 1


@pytest.fixture(scope="module")
def per_minute(settings):
    """Limits of a minute: what a test sends fits well within one window, however slow."""
    application = create_app(
        settings.with_(
            rate_limits=True,
            limit_accounts="3/minute",
            limit_accounts_key="none",
            limit_creation="3/minute",
            limit_creation_key="3/minute",
            limit_intents="3/minute",
            limit_intents_key="3/minute",
            limit_refunds="100/minute",
        ),
        TESTING=True,
    )
    yield application
    application.extensions["quarterdeck"].store.pool.close()


def _refused_then_served(per_minute, budget: str):
    """For ``budget``: (a refused request, an accepted one), each a call with a client."""
    other = client_from(per_minute)  # a helper address: its spending is not the one under test
    if budget == "accounts":
        return (
            lambda c: c.post("/v1/accounts", json={"handle": "no spaces allowed!"}),
            lambda c: c.post("/v1/accounts", json={"handle": unique()}),
        )
    if budget == "games":
        return (
            lambda c: c.post("/v1/games", json={"game": "nauticus", "players": ["only-one"]}),
            lambda c: c.post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}),
        )
    if budget == "tables":
        _, key = register(other)  # the key's windows are refunded too
        return (
            lambda c: c.post("/v1/tables", json={"game": "nauticus", "seats": 99}, headers=auth(key)),
            lambda c: c.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(key)),
        )
    games = [
        client_from(per_minute).post("/v1/games", json={"game": "nauticus", "players": ["a", "b"]}).get_json()
        for _ in range(5)
    ]
    seats = iter((g["id"], g["seats"][0]["token"]) for g in games)
    gid, token = next(seats)
    return (
        lambda c: c.post(f"/v1/games/{gid}/intents", json={"intent": {"type": "no_such"}}, headers=auth(token)),
        lambda c: c.post(
            "/v1/games/{}/intents".format(*(s := next(seats))), json={"intent": {"type": "resign"}}, headers=auth(s[1])
        ),
    )


@pytest.mark.parametrize("budget", ["accounts", "games", "tables", "intents"])
def test_only_accepted_requests_spend_a_budget(per_minute, budget):
    """A refused request (4xx) is counted in no window of its budget: twenty invalid
    registrations spent an address's whole day of accounts, and the valid one after
    them got a 429.  Here ten refusals of each budget, by address and by key, then the
    budget's three accepted requests are served, and the fourth is the 429."""
    refused, served = _refused_then_served(per_minute, budget)
    c = client_from(per_minute)
    for _ in range(10):
        resp = refused(c)
        assert 400 <= resp.status_code < 500 and resp.status_code != 429, resp.get_json()
    for _ in range(3):
        resp = served(c)
        assert resp.status_code < 300, resp.get_json()
    resp = served(c)
    assert resp.status_code == 429, resp.get_json()
    assert resp.get_json()["error"]["details"]["budget"] == ("creation" if budget in ("games", "tables") else budget)
