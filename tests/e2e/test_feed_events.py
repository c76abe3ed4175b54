"""GET /v1/games/{id}/events over HTTP: NDJSON lines, redaction while a game
runs (and not after), and the chain still checkable on redacted lines."""

from __future__ import annotations

import json
from typing import Any

from support import auth, play_fast

from service.audit import verify
from service.games import registry
from service.games.base import ADMIN, Event

LINE_KEYS = {
    "seq",
    "type",
    "schema_version",
    "data",
    "meta",
    "data_digest",
    "meta_digest",
    "prev_hash",
    "hash",
    "redacted",
}


def feed(client, gid: str, token: str | None = None, query: str = "") -> list[dict[str, Any]]:
    resp = client.get(f"/v1/games/{gid}/events{query}", headers=auth(token) if token else {})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.mimetype == "application/x-ndjson"
    text = resp.get_data(as_text=True)
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def _check_redaction(lines, stored, engine, viewer) -> int:
    """Each line is the stored event, redacted exactly as the rules say for
    ``viewer`` while the game runs.  Returns how many lines were redacted."""
    redacted = 0
    for line, e in zip(lines, stored, strict=True):
        assert set(line) == LINE_KEYS
        for k in ("seq", "type", "data_digest", "meta_digest", "prev_hash", "hash"):
            assert line[k] == getattr(e, k)
        if e.type in ("GameCreated", "GameFinished"):
            expected_data = e.data
        else:
            expected_data = engine.redact_event(Event(e.type, e.data), viewer).data
        assert line["data"] == expected_data
        if e.meta.get("intent") is not None and e.meta.get("seat") != viewer:
            assert "intent" not in line["meta"]
        else:
            assert line["meta"] == e.meta
        assert line["redacted"] == (line["data"] != e.data or line["meta"] != e.meta)
        redacted += line["redacted"]
    return redacted


def test_waters_of_nereus_feed_redacts_while_running_and_not_after(client, app, ctx, new_game, settings):
    created = new_game("waters-of-nereus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 7, stop_after=20, intent_prefix="f")
    stored = ctx.store.read(gid)
    engine = registry.get("waters-of-nereus")
    tokens = {s["seat"]: s["token"] for s in created["seats"]}

    spectator = feed(client, gid)
    seat0 = feed(client, gid, tokens[0])
    organiser = feed(client, gid, settings.admin_token)
    assert _check_redaction(spectator, stored, engine, None) > 0
    assert _check_redaction(seat0, stored, engine, 0) > 0
    assert organiser == [e.to_json() | {"redacted": False} for e in stored]
    # Hidden data: the shuffled stacks never reach a spectator.
    shuffled = [line for line in spectator if line["type"].endswith("Shuffled")]
    assert shuffled and all(line["redacted"] for line in shuffled)
    # Own intents stay visible to their seat, others' are removed.
    assert any(line["meta"].get("intent") for line in seat0 if line["meta"].get("seat") == 0)
    assert not any("intent" in line["meta"] for line in seat0 if line["meta"].get("seat") == 1)
    # Redaction keeps every link checkable, and all viewers see the same chain.
    for lines in (spectator, seat0, organiser):
        assert verify.check_chain(gid, lines, None)["ok"] is True
    assert [line["hash"] for line in spectator] == [line["hash"] for line in organiser]

    play_fast(app, created, 7, intent_prefix="f")
    after = feed(client, gid)
    assert not any(line["redacted"] for line in after)
    assert after == feed(client, gid, settings.admin_token)
    seed = bytes.fromhex(after[-1]["data"]["seed"])
    assert verify.check_chain(gid, after, seed)["details"]["digests_checked"] is True
    assert verify.check_chain(gid, after, seed)["ok"] is True


def test_redaction_mechanism_with_a_wrapped_engine(client, app, ctx, new_game, monkeypatch):
    """Any engine's redact_event is honoured: hide one event type for everyone but the organiser."""
    engine = registry.get("nauticus")
    original = engine.redact_event
    hidden_type: dict[str, str] = {}

    def redact(event: Event, viewer: Any) -> Event:
        if viewer != ADMIN and event.type == hidden_type.get("t"):
            return Event(event.type, {"hidden": True})
        return original(event, viewer)

    monkeypatch.setattr(engine, "redact_event", redact)
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 2, stop_after=8, intent_prefix="f")
    stored = ctx.store.read(gid)
    hidden_type["t"] = stored[3].type
    lines = feed(client, gid)
    assert _check_redaction(lines, stored, engine, None) > 0
    assert all(line["data"] == {"hidden": True} for line in lines if line["type"] == hidden_type["t"])
    assert verify.check_chain(gid, lines, None)["ok"]
    play_fast(app, created, 2, intent_prefix="f")
    assert not any(line["redacted"] for line in feed(client, gid))


def test_after_returns_only_later_events(client, app, new_game, settings):
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 1, stop_after=5, intent_prefix="f")
    full = feed(client, gid, settings.admin_token)
    tail = feed(client, gid, settings.admin_token, "?after=4")
    assert [line["seq"] for line in tail] == list(range(5, len(full) + 1))
    assert tail == full[4:]
    assert feed(client, gid, settings.admin_token, f"?after={len(full)}") == []


def test_feed_refuses_a_foreign_token_and_bad_queries(client, new_game):
    gid = new_game("nauticus", ["ann", "bob"])["id"]
    assert client.get(f"/v1/games/{gid}/events", headers=auth("not-a-token")).status_code == 403
    assert client.get(f"/v1/games/{gid}/events?after=-1").status_code == 422
    assert client.get(f"/v1/games/{gid}/events?follow=1&timeout=31").status_code == 422
    assert client.get("/v1/games/00000000-0000-4000-8000-000000000000/events").status_code == 404
