"""Accounts and keys against real PostgreSQL and Redis (docs/API.md "Accounts
and keys"): register, handle rules, who am I, rotation, organisers, account
games whose seats act with their keys, and nothing written on a refusal."""

from __future__ import annotations

import hashlib

import pytest
from support import auth
from support.accounts import accept_invitations, organiser, register, unique

from projections.runner import project_game


def count(ctx, table: str) -> int:
    with ctx.store.pool.connection() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_register_and_who_am_i(client, ctx):
    handle, key = register(client)
    assert key.startswith("qdk_") and len(key) == 4 + 43
    me = client.get("/v1/account", headers=auth(key))
    assert me.status_code == 200 and me.get_json() == {"handle": handle, "kind": "player"}
    # Stored only as sha256, nowhere in clear.
    with ctx.store.pool.connection() as conn:
        stored = conn.execute("SELECT key_hash FROM accounts WHERE handle = %s", (handle,)).fetchone()[0]
        dump = conn.execute("SELECT string_agg(t::text, '') FROM accounts t").fetchone()[0]
    assert bytes(stored) == hashlib.sha256(key.encode()).digest()
    assert key not in dump and key[4:] not in dump


@pytest.mark.parametrize(
    "handle",
    ["ab", "x" * 25, "ann\n", "ann ", "a.b", "ａｎｎ", "аnn", "ann\u200b", "", "ann\x00", 7, None, ["ann"], "é" * 5],
)
def test_bad_handles_are_refused_and_nothing_is_written(client, ctx, handle):
    before = count(ctx, "accounts")
    resp = client.post("/v1/accounts", json={"handle": handle})
    assert resp.status_code == 422, resp.get_json()
    code = resp.get_json()["error"]["code"]
    assert code == ("invalid_handle" if isinstance(handle, str) else "validation_error")
    assert count(ctx, "accounts") == before


def test_handles_are_unique_ignoring_case(client, ctx):
    handle, _ = register(client, unique("Ann"))
    before = count(ctx, "accounts")
    for other in [handle, handle.lower(), handle.upper()]:
        resp = client.post("/v1/accounts", json={"handle": other})
        assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "handle_taken", other
    assert count(ctx, "accounts") == before


def test_very_long_or_odd_bodies_are_refused(client, ctx):
    before = count(ctx, "accounts")
    too_long = client.post(
        "/v1/accounts", data=b'{"handle": "' + b"a" * 70_000 + b'"}', content_type="application/json"
    )
    assert too_long.status_code == 413
    extra = client.post("/v1/accounts", json={"handle": unique(), "kind": "organiser"})
    assert extra.status_code == 422 and extra.get_json()["error"]["code"] == "validation_error"
    assert client.post("/v1/accounts", data=b"[]", content_type="application/json").status_code == 400
    assert count(ctx, "accounts") == before


def test_rotation_stops_the_old_key_at_once(client):
    handle, old = register(client)
    resp = client.post("/v1/account/key", headers=auth(old))
    assert resp.status_code == 200
    new = resp.get_json()["key"]
    assert new != old and new.startswith("qdk_")
    assert client.get("/v1/account", headers=auth(new)).get_json()["handle"] == handle
    refused = client.get("/v1/account", headers=auth(old))
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "invalid_token"
    # The old key cannot rotate again either, nor act anywhere.
    assert client.post("/v1/account/key", headers=auth(old)).status_code == 403
    assert client.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(old)).status_code == 403


def test_account_endpoints_need_a_key(client, settings):
    resp = client.get("/v1/account")
    assert resp.status_code == 401 and resp.get_json()["error"]["code"] == "key_required"
    for token in ["qdk_" + "A" * 43, "A" * 43, settings.admin_token]:
        resp = client.get("/v1/account", headers=auth(token))
        assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "invalid_token", token
    assert client.post("/v1/account/key").status_code == 401


def test_only_the_operator_creates_organisers(client, ctx, settings):
    _, player_key = register(client)
    _, cup_key = organiser(client, settings)
    before = count(ctx, "accounts")
    for headers in [{}, auth(player_key), auth(cup_key), auth("x" * 43)]:
        resp = client.post("/v1/organisers", json={"handle": unique("cup")}, headers=headers)
        assert resp.status_code in (401, 403), (headers, resp.get_json())
    assert count(ctx, "accounts") == before
    assert client.get("/v1/account", headers=auth(cup_key)).get_json()["kind"] == "organiser"


def test_an_organiser_seats_accounts_whose_keys_act_for_their_seats(client, ctx, settings):
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    _, cup_key = organiser(client, settings)
    body = {"game": "nauticus", "players": [ann, bob], "accounts": True, "rated": True}
    # A player's key may not seat accounts; nor may nobody.
    assert client.post("/v1/games", json=body, headers=auth(ann_key)).status_code == 403
    assert client.post("/v1/games", json=body).status_code == 401
    # Unknown accounts, or an organiser in a seat, are refused.
    missing = client.post("/v1/games", json=body | {"players": [ann, unique("nobody")]}, headers=auth(cup_key))
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "account_not_found"
    created = client.post("/v1/games", json=body, headers=auth(cup_key))
    assert created.status_code == 201, created.get_json()
    game = created.get_json()
    assert game["rated"] is True and "created_by" in game
    assert all("token" not in s and s["account"] is True for s in game["seats"])
    # Seated once each account accepts with its own key (docs/API.md, "Consent").
    assert game["status"] == "invited"
    accept_invitations(client, [ann_key, bob_key])
    gid = game["id"]
    project_game(ctx.redis, ctx.store, gid)
    view = client.get(f"/v1/games/{gid}", headers=auth(ann_key)).get_json()
    assert view["seat"] == 0 and view["rated"] is True
    seat = view["to_act"][0]
    key = [ann_key, bob_key][seat]
    other = [ann_key, bob_key][1 - seat]
    legal = client.get(f"/v1/games/{gid}/legal", headers=auth(key)).get_json()
    assert legal["seat"] == seat
    intent = {"intent": legal["intents"][0], "expected_version": legal["version"]}
    # The other account is the other seat: not its turn.
    assert client.post(f"/v1/games/{gid}/intents", json=intent, headers=auth(other)).status_code == 422
    # A stranger's key holds no seat.
    _, stranger = register(client, unique("cy"))
    resp = client.post(f"/v1/games/{gid}/intents", json=intent, headers=auth(stranger))
    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "not_seated"
    assert client.get(f"/v1/games/{gid}/legal", headers=auth(stranger)).status_code == 403
    assert client.get(f"/v1/games/{gid}", headers=auth(stranger)).get_json()["seat"] is None
    assert ctx.store.version(gid) == legal["version"]
    ok = client.post(f"/v1/games/{gid}/intents", json=intent, headers=auth(key))
    assert ok.status_code == 201, ok.get_json()
    # After a rotation the new key acts, the old one is nobody.
    new_key = client.post("/v1/account/key", headers=auth(other)).get_json()["key"]
    assert client.get(f"/v1/games/{gid}", headers=auth(other)).status_code == 403
    assert client.get(f"/v1/games/{gid}", headers=auth(new_key)).get_json()["seat"] == 1 - seat


def test_casual_names_follow_the_handle_rules(client, ctx):
    before = count(ctx, "games")
    for players in [["ann\n", "bob"], ["Ann", "ann"], ["ann", "ANN", "bob"], ["ａｎｎ", "bob"]]:
        resp = client.post("/v1/games", json={"game": "nauticus", "players": players})
        assert resp.status_code == 422, (players, resp.get_json())
    assert client.get("/v1/players/ann%0A").status_code == 404
    assert client.get("/v1/games?player=ann%0A").status_code == 422
    assert count(ctx, "games") == before
    # Rated needs accounts.
    resp = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"], "rated": True})
    assert resp.status_code == 422 and resp.get_json()["error"]["code"] == "rated_needs_accounts"
    casual = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]}).get_json()
    assert "rated" not in casual and all("token" in s for s in casual["seats"])
