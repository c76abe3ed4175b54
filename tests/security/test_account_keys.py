"""Account keys: shown once, stored as sha256 only, never logged, never in any
later answer, in PostgreSQL or in Redis; compared in constant time; a rotated
key, another account's key and a forged one are answered alike."""

from __future__ import annotations

import hashlib
import logging

from support import auth
from support.accounts import accept_invitations, organiser, register, unique

from projections.runner import project_game
from service import nudge


def test_keys_are_shown_once_stored_hashed_and_never_logged(client, ctx, settings, caplog, run_worker):
    caplog.set_level(logging.DEBUG)
    run_worker()
    ctx.redis.delete(*(nudge.drain_pending(s) for s in range(settings.projection_shards)))
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    _, cup_key = organiser(client, settings)
    keys = [ann_key, bob_key, cup_key]
    rotated = client.post("/v1/account/key", headers=auth(ann_key)).get_json()["key"]
    keys.append(rotated)
    table = client.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(rotated)).get_json()
    started = client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key)).get_json()
    gid = started["game_id"]
    run_worker()
    project_game(ctx.redis, ctx.store, gid)
    answers = [
        client.get("/v1/account", headers=auth(rotated)),
        client.get(f"/v1/games/{gid}", headers=auth(bob_key)),
        client.get(f"/v1/games/{gid}/legal", headers=auth(bob_key)),
        client.get(f"/v1/games/{gid}/events", headers=auth(cup_key)),
        client.get(f"/v1/tables/{table['id']}", headers=auth(rotated)),
        client.get("/v1/tables", headers=auth(bob_key)),
        client.get(f"/v1/games/{gid}", headers=auth(ann_key)),  # the old key: refused
        client.post(
            "/v1/games", json={"game": "nauticus", "players": [ann, bob], "accounts": True}, headers=auth(cup_key)
        ),
        client.post("/v1/accounts", json={"handle": ann_key[:20]}),
    ]
    run_worker()
    for resp in answers:
        body = resp.get_data(as_text=True)
        assert not any(k in body or k[4:] in body for k in keys), body[:300]
    # Stored as sha256, nothing else, anywhere in PostgreSQL ...
    with ctx.store.pool.connection() as conn:
        stored = {
            row[0]: bytes(row[1])
            for row in conn.execute(
                "SELECT handle, key_hash FROM accounts WHERE handle = %s OR handle = %s", (ann, bob)
            )
        }
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        for name in tables:
            dump = conn.execute(f"SELECT coalesce(string_agg(t::text, ''), '') FROM {name} t").fetchone()[0]
            assert not any(k[4:] in dump for k in keys), name
    assert stored == {ann: hashlib.sha256(rotated.encode()).digest(), bob: hashlib.sha256(bob_key.encode()).digest()}
    # ... or in Redis ...
    for key in ctx.redis.scan_iter(count=1000):
        kind = ctx.redis.type(key)
        if kind == b"hash":
            blob = b"".join(k + v for k, v in ctx.redis.hgetall(key).items())
        elif kind == b"string":
            blob = ctx.redis.get(key) or b""
        elif kind in (b"list", b"set", b"zset"):
            blob = repr(ctx.redis.dump(key)).encode()
        else:
            continue
        assert not any(k[4:].encode() in blob for k in keys), key
    # ... or in any log record, at DEBUG, before any filter.
    text = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert not any(k[4:] in text for k in keys)


def test_keys_are_compared_in_constant_time(client, monkeypatch):
    """The key's hash found by the lookup is compared again with
    ``hmac.compare_digest`` (a lookup by the hash of a random key tells a
    timing attacker nothing about any stored key: it is a hash of his own)."""
    from service.domain import identity

    _, key = register(client)
    calls: list[int] = []
    real = identity.hmac.compare_digest

    def counting(a, b):
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(identity.hmac, "compare_digest", counting)
    assert client.get("/v1/account", headers=auth(key)).status_code == 200
    assert calls


def test_a_rotated_key_another_accounts_key_and_a_forged_key_are_answered_alike(client, ctx, settings):
    _, cup_key = organiser(client, settings)
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    created = client.post(
        "/v1/games", json={"game": "nauticus", "players": [ann, bob], "accounts": True}, headers=auth(cup_key)
    ).get_json()
    accept_invitations(client, [ann_key, bob_key])
    gid = created["id"]
    opened = ctx.store.version(gid)
    project_game(ctx.redis, ctx.store, gid)
    _, old = register(client, unique("cy"))
    client.post("/v1/account/key", headers=auth(old))
    forged = "qdk_" + "A" * 43
    for method, path, body in [
        ("GET", f"/v1/games/{gid}", None),
        ("GET", f"/v1/games/{gid}/legal", None),
        ("POST", f"/v1/games/{gid}/intents", {"intent": {"type": "nothing"}}),
        ("GET", f"/v1/games/{gid}/state", None),
        ("GET", "/v1/account", None),
        ("POST", "/v1/tables", {"game": "nauticus", "seats": 2}),
    ]:
        answers = []
        for key in [old, forged]:
            resp = client.open(path, method=method, json=body, headers=auth(key))
            answers.append((resp.status_code, resp.get_data()))
        assert answers[0] == answers[1], path
        assert answers[0][0] == 403 and b'"invalid_token"' in answers[0][1], (path, answers[0])
    assert ctx.store.version(gid) == opened
