"""Seat tokens: act only for their seat and game; random, shown once, stored
hashed, compared in constant time; a wrong token reveals nothing beyond what a
spectator already sees."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from support import auth

from projections.runner import project_game


@pytest.fixture
def two_games(client, new_game, ctx):
    games = [new_game(game="nauticus", players=["ann", "bob"]), new_game(game="nauticus", players=["cy", "di"])]
    for g in games:
        project_game(ctx.redis, ctx.store, g["id"])
    return games


def _to_act(client, gid: str) -> int:
    return client.get(f"/v1/games/{gid}").get_json()["to_act"][0]


def test_a_token_acts_only_for_its_seat_and_game(client, ctx, two_games):
    a, b = two_games
    gid = a["id"]
    seat = _to_act(client, gid)
    other = 1 - seat
    legal = client.get(f"/v1/games/{gid}/legal", headers=auth(a["seats"][seat]["token"])).get_json()
    intent = {"intent": legal["intents"][0], "expected_version": legal["version"]}
    before = ctx.store.version(gid)

    # The other seat's token is that other seat: it is not its turn.
    resp = client.post(f"/v1/games/{gid}/intents", json=intent, headers=auth(a["seats"][other]["token"]))
    assert resp.status_code == 422, resp.get_json()
    assert client.get(f"/v1/games/{gid}/legal", headers=auth(a["seats"][other]["token"])).get_json()["seat"] == other
    # A seat token of another game is no token here, for any endpoint.
    for s in b["seats"]:
        resp = client.post(f"/v1/games/{gid}/intents", json=intent, headers=auth(s["token"]))
        assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "invalid_token"
        assert client.get(f"/v1/games/{gid}/legal", headers=auth(s["token"])).status_code == 403
        assert client.get(f"/v1/games/{gid}", headers=auth(s["token"])).status_code == 403
    assert ctx.store.version(gid) == before
    # The right token of the right seat works.
    resp = client.post(f"/v1/games/{gid}/intents", json=intent, headers=auth(a["seats"][seat]["token"]))
    assert resp.status_code == 201


def test_tokens_are_random_shown_once_and_stored_hashed(client, ctx, two_games, settings):
    tokens = [s["token"] for g in two_games for s in g["seats"]]
    assert len(set(tokens)) == len(tokens)
    assert all(len(t) >= 40 for t in tokens)  # 32 random bytes, urlsafe base64
    for g in two_games:
        gid = g["id"]
        # Never shown again: not in any later answer, even the organiser's.
        for path in [f"/v1/games/{gid}", f"/v1/games/{gid}/events", "/v1/games", f"/v1/games/{gid}/export"]:
            body = client.get(path, headers=auth(settings.admin_token)).get_data(as_text=True)
            assert not any(t in body for t in tokens), path
        # Stored as sha256 only.
        with ctx.store.pool.connection() as conn:
            rows = conn.execute("SELECT seat, token_hash FROM seat_tokens WHERE game_id = %s ORDER BY seat", (gid,))
            stored = [(seat, bytes(h)) for seat, h in rows]
        assert stored == [(s["seat"], hashlib.sha256(s["token"].encode()).digest()) for s in g["seats"]]
    # Anywhere in PostgreSQL or Redis, as text: no raw token.
    with ctx.store.pool.connection() as conn:
        for table in ["games", "game_seeds", "seat_tokens", "events", "intent_keys", "snapshots"]:
            dump = conn.execute(f"SELECT coalesce(string_agg(t::text, ''), '') FROM {table} t").fetchone()[0]
            assert not any(t in dump for t in tokens), table
    for key in ctx.redis.scan_iter(count=1000):
        kind = ctx.redis.type(key)
        if kind == b"hash":
            blob = b"".join(k + v for k, v in ctx.redis.hgetall(key).items())
        elif kind == b"string":
            blob = ctx.redis.get(key) or b""
        else:
            continue
        assert not any(t.encode() in blob for t in tokens), key


def test_tokens_are_compared_in_constant_time_against_every_seat(client, two_games, monkeypatch):
    """Every comparison goes through ``hmac.compare_digest``, and every seat's
    hash is compared whichever seat matches (no early exit that times out which)."""
    import service.http.common as common
    import service.service_layer.commands as handlers

    calls: list[int] = []
    real = hmac.compare_digest

    def counting(a, b):
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(common.hmac, "compare_digest", counting)
    monkeypatch.setattr(handlers.hmac, "compare_digest", counting)
    gid = two_games[0]["id"]
    for token in [two_games[0]["seats"][0]["token"], two_games[0]["seats"][1]["token"], "x" * 43]:
        calls.clear()
        client.get(f"/v1/games/{gid}/legal", headers=auth(token))
        assert len(calls) >= 2, "each seat's hash must be compared"
        calls.clear()
        client.post(f"/v1/games/{gid}/intents", json={"intent": {"type": "nothing"}}, headers=auth(token))
        assert len(calls) >= 2


def test_a_wrong_token_reveals_nothing_a_spectator_would_not_see(client, two_games):
    a, b = two_games
    gid = a["id"]
    forged = "x" * 43
    foreign = b["seats"][0]["token"]
    for method, path, body in [
        ("GET", f"/v1/games/{gid}", None),
        ("GET", f"/v1/games/{gid}/legal", None),
        ("POST", f"/v1/games/{gid}/intents", {"intent": {"type": "nothing"}}),
        ("GET", f"/v1/games/{gid}/events", None),
    ]:
        answers = []
        for token in [forged, foreign]:
            resp = client.open(path, method=method, json=body, headers=auth(token))
            answers.append((resp.status_code, resp.get_data()))
        # Someone else's valid token is indistinguishable from garbage.
        assert answers[0] == answers[1], path
        status, raw = answers[0]
        assert status in (401, 403), (path, status)
        text = raw.decode()
        assert "ann" not in text and "bob" not in text and gid not in text, text
    # For a game that does not exist the answer is the public one (404 to anyone).
    missing = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/v1/games/{missing}", headers=auth(forged)).status_code == 404
    assert client.get(f"/v1/games/{missing}").status_code == 404
