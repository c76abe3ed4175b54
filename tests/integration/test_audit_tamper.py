"""An attacker with write access to PostgreSQL alters a finished game; the
audit must fail, at the right seq, and the offline verifier must agree.

The events table refuses UPDATE and DELETE through triggers; the attacker turns
them off first (``ALTER TABLE events DISABLE TRIGGER USER``), as anyone with
the table's ownership could, and the test turns them back on afterwards."""

from __future__ import annotations

import json
import os
import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

from projections import keys
from projections.runner import project_game
from service.audit import bundle, verify
from service.audit import checks as audit
from service.domain.replay import fold_stream
from service.games import registry


def play_fast(app: Any, created: dict[str, Any], seed: int = 0) -> None:
    games = app.extensions["quarterdeck"].games
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    chooser = random.Random(seed)
    n = 0
    while True:
        loaded = games.load(created["id"])
        with loaded.lock:
            games.refresh(loaded)
            if loaded.finished:
                return
            seat = chooser.choice(loaded.engine.to_act(loaded.state))
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        games.submit(created["id"], tokens[seat], command, None, None, f"t{n}")
        n += 1


@contextmanager
def attacker(settings) -> Iterator[psycopg.Connection]:
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
        try:
            yield conn
        finally:
            conn.execute("ALTER TABLE events ENABLE TRIGGER USER")


@pytest.fixture
def game(app, ctx, new_game):
    """A finished 2-player Nauticus game with an up-to-date read model."""
    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 11)
    project_game(ctx.redis, ctx.store, created["id"])
    report = audit.audit_game(ctx.store, ctx.redis, created["id"])
    assert report.ok, report.render()
    return created["id"]


def _audit(client, gid: str) -> dict[str, Any]:
    resp = client.get(f"/v1/games/{gid}/audit")
    assert resp.status_code == 200
    return resp.get_json()


def _offline(client, gid: str) -> dict[str, Any]:
    return verify.verify_bundle(client.get(f"/v1/games/{gid}/export").get_json(), redecide=audit.redecide_dicts)


def _middle_engine_event(ctx, gid: str) -> Any:
    events = ctx.store.read(gid)
    candidates = [e for e in events[len(events) // 3 :] if e.meta.get("intent") and e.data]
    return candidates[0]


def test_tampered_event_fails_at_its_seq(client, ctx, settings, game):
    target = _middle_engine_event(ctx, game)
    with attacker(settings) as conn:
        conn.execute(
            "UPDATE events SET data = (data::jsonb || %s)::json WHERE game_id = %s AND seq = %s",
            (Jsonb({"tampered": True}), uuid.UUID(game), target.seq),
        )
    report = _audit(client, game)
    assert report["ok"] is False
    chain = report["checks"]["hash_chain"]["details"]
    assert chain["first_broken_seq"] == target.seq and "hash does not match" in chain["reason"]
    div = report["checks"]["redecide"]["details"]["first_divergence"]
    assert div["seq"] == target.seq and div["what"] == "data"
    assert report["checks"]["seed"]["ok"] is True
    # (projection may still pass: evolve ignores a key it does not know.)
    # The offline verifier agrees on the same bundle.
    offline = _offline(client, game)
    assert offline["ok"] is False
    assert offline["checks"]["hash_chain"]["details"]["first_broken_seq"] == target.seq
    assert offline["checks"]["redecide"]["details"]["first_divergence"]["seq"] == target.seq


def test_rewritten_digest_and_hash_still_breaks_the_chain(client, ctx, settings, game):
    """A cleverer attacker recomputes the event's own hash (without the seed he
    cannot make a valid salted digest; here he uses a wrong seed): the next
    link, or the digest, still gives him away at that seq."""
    from service.domain import canonical

    target = _middle_engine_event(ctx, game)
    data = dict(target.data) | {"tampered": True}
    _dd, _md, h = canonical.seal(b"\x01" * 32, game, target.seq, target.type, 1, data, target.meta, target.prev_hash)
    with attacker(settings) as conn:
        conn.execute(
            "UPDATE events SET data = %s, hash = decode(%s, 'hex') WHERE game_id = %s AND seq = %s",
            (Json(data), h, uuid.UUID(game), target.seq),
        )
    report = _audit(client, game)
    assert report["ok"] is False
    assert report["checks"]["hash_chain"]["details"]["first_broken_seq"] == target.seq


def test_swapped_stored_seed_fails_the_seed_check(client, ctx, settings, game):
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        conn.execute("UPDATE game_seeds SET seed = %s WHERE game_id = %s", (os.urandom(32), uuid.UUID(game)))
    report = _audit(client, game)
    assert report["ok"] is False
    seed = report["checks"]["seed"]
    assert seed["ok"] is False and seed["details"]["stored_matches"] is False
    assert seed["details"]["revealed_matches"] is True
    # The stream itself is intact and re-decides with the revealed seed.
    assert report["checks"]["hash_chain"]["ok"] and report["checks"]["redecide"]["ok"]


def test_swapped_revealed_seed_fails_seed_and_chain(client, ctx, settings, game):
    closing = ctx.store.read(game)[-1]
    assert closing.type == "GameFinished"
    with attacker(settings) as conn:
        conn.execute(
            "UPDATE events SET data = jsonb_set(data::jsonb, '{seed}', %s)::json WHERE game_id = %s AND seq = %s",
            (Jsonb(os.urandom(32).hex()), uuid.UUID(game), closing.seq),
        )
    report = _audit(client, game)
    assert report["ok"] is False
    assert report["checks"]["seed"]["details"]["revealed_matches"] is False
    assert report["checks"]["hash_chain"]["details"]["first_broken_seq"] == closing.seq
    offline = _offline(client, game)
    assert offline["ok"] is False and offline["checks"]["seed"]["ok"] is False


def test_edited_intent_breaks_chain_and_redecide_at_its_seq(client, ctx, settings, game):
    events = ctx.store.read(game)
    engine = registry.get("nauticus")
    # Find a batch whose seat had another legal intent, and swap that in.
    target, other = None, None
    for i in range(len(events) // 3, len(events)):
        e = events[i]
        if not e.meta.get("intent") or e.meta["intent_id"] == events[i - 1].meta.get("intent_id"):
            continue
        state = fold_stream(engine, events[:i])
        options = [c.to_json() for c in engine.legal(state, e.meta["seat"])]
        alternatives = [c for c in options if c != e.meta["intent"]]
        if alternatives:
            target, other = e, alternatives[0]
            break
    assert target is not None
    meta = dict(target.meta) | {"intent": other}
    with attacker(settings) as conn:
        conn.execute(
            # Only the decision's first event stores its meta (the others: "the one before").
            "UPDATE events SET meta = %s WHERE game_id = %s AND meta->>'intent_id' = %s",
            (Json(meta), uuid.UUID(game), target.meta["intent_id"]),
        )
    report = _audit(client, game)
    assert report["ok"] is False
    chain = report["checks"]["hash_chain"]["details"]
    assert chain["first_broken_seq"] == target.seq and "hash does not match" in chain["reason"]
    div = report["checks"]["redecide"]["details"]["first_divergence"]
    assert div["seq"] == target.seq, div
    offline = _offline(client, game)
    assert offline["checks"]["hash_chain"]["details"]["first_broken_seq"] == target.seq
    assert offline["checks"]["redecide"]["details"]["first_divergence"]["seq"] == target.seq


def test_deleted_event_is_reported_as_a_gap(client, ctx, settings, game):
    target = _middle_engine_event(ctx, game)
    with attacker(settings) as conn:
        conn.execute("DELETE FROM events WHERE game_id = %s AND seq = %s", (uuid.UUID(game), target.seq))
    report = _audit(client, game)
    assert report["ok"] is False
    chain = report["checks"]["hash_chain"]["details"]
    assert chain["first_broken_seq"] == target.seq and "missing" in chain["reason"]
    div = report["checks"]["redecide"]["details"]["first_divergence"]
    assert div["seq"] == target.seq and div["what"] == "missing"
    offline = _offline(client, game)
    assert offline["checks"]["hash_chain"]["details"]["first_broken_seq"] == target.seq


def test_deleted_closing_event_is_caught_by_redecide_and_projection(client, ctx, settings, game):
    """Truncating the tail keeps the remaining links intact; re-deciding shows
    the game had ended, and the read model is ahead of the stream."""
    closing = ctx.store.read(game)[-1]
    with attacker(settings) as conn:
        conn.execute("DELETE FROM events WHERE game_id = %s AND seq = %s", (uuid.UUID(game), closing.seq))
    # The game now looks running: the operator token is needed.
    assert client.get(f"/v1/games/{game}/audit").status_code == 401
    report = client.get(f"/v1/games/{game}/audit", headers={"Authorization": f"Bearer {settings.admin_token}"})
    report = report.get_json()
    assert report["ok"] is False
    assert report["checks"]["hash_chain"]["ok"] is True
    div = report["checks"]["redecide"]["details"]["first_divergence"]
    assert div["seq"] == closing.seq and div["what"] == "missing"
    assert report["checks"]["projection"]["ok"] is False


def test_corrupted_read_model_fails_projection_until_rebuilt(client, ctx, game):
    ctx.redis.hset(keys.game(game), "view:public", json.dumps({"forged": True}))
    report = _audit(client, game)
    assert report["ok"] is False
    proj = report["checks"]["projection"]
    assert proj["details"]["mismatched_fields"] == ["view:public"]
    assert all(report["checks"][c]["ok"] for c in ("hash_chain", "seed", "redecide"))
    from projections.runner import rebuild_game

    rebuild_game(ctx.redis, ctx.store, game)
    assert _audit(client, game)["ok"] is True


def test_offline_verifier_agrees_with_online_audit(client, ctx, game):
    """Same honest game, two implementations: same verdict and same head."""
    online = _audit(client, game)
    offline = _offline(client, game)
    assert online["ok"] is offline["ok"] is True
    for name in ("hash_chain", "seed", "redecide"):
        assert online["checks"][name]["ok"] == offline["checks"][name]["ok"]
    assert online["head_hash"] == offline["checks"]["hash_chain"]["details"]["head_hash"]
    # And the bundle re-read from text folds to the same final state.
    b = client.get(f"/v1/games/{game}/export").get_json()
    events = bundle.from_bundle_events(game, b["events"])
    engine = registry.get("nauticus")
    assert fold_stream(engine, events) == fold_stream(engine, ctx.store.read(game))


def test_insider_with_the_seed_resealing_the_chain_is_caught_by_redecide(client, ctx, settings, game):
    """Someone holding the seed edits an outcome and re-seals every later event
    (digests, hashes, the closing head hash): the chain and the seed check pass,
    but re-deciding the recorded intents gives him away at the edited seq."""
    from service.domain.pipeline import seal as seal_events
    from service.domain.records import NewEvent

    events = ctx.store.read(game)
    seed = ctx.store.secrets(game)[0]
    target = _middle_engine_event(ctx, game)
    i = target.seq - 1
    new = [NewEvent(e.type, e.data, e.meta, e.schema_version) for e in events[i:]]
    new[0] = NewEvent(target.type, dict(target.data) | {"tampered": True}, target.meta)
    resealed = seal_events(seed, game, target.seq, events[i - 1].hash, new)
    closing = resealed[-1]
    head = resealed[-2].hash
    new[-1] = NewEvent(closing.type, dict(closing.data) | {"head_hash": head}, closing.meta)
    resealed = seal_events(seed, game, target.seq, events[i - 1].hash, new)
    with attacker(settings) as conn, conn.cursor() as cur:
        cur.executemany(
            "UPDATE events SET data = %s, hash = decode(%s, 'hex') WHERE game_id = %s AND seq = %s",
            [(Json(e.data), e.hash, uuid.UUID(game), e.seq) for e in resealed],
        )
    report = _audit(client, game)
    assert report["checks"]["hash_chain"]["ok"] is True
    assert report["checks"]["seed"]["ok"] is True
    assert report["ok"] is False
    div = report["checks"]["redecide"]["details"]["first_divergence"]
    assert div["seq"] == target.seq and div["what"] == "data"
