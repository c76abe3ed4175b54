"""Hidden information leaves through no endpoint, header or error message.

For every registered engine: a two-seat game is played partway (for a game
with secret choices, to a point where one seat has chosen and the other not),
then every GET endpoint of ``/openapi.json`` is walked as each seat and as a
spectator, and refused intents are sent as each seat.  What a viewer may not
know is learnt from the engine itself: the values in the organiser's view
that are absent from the viewer's own view, and the keys the viewer's view
lacks.  None of it may appear in anything the viewer receives."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from support import auth

from projections.runner import project_game
from service.core.pipeline import PLATFORM_EVENTS
from service.core.replay import fold_stream
from service.games import registry
from service.games.base import ADMIN, Event


def _leaves(obj: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    if isinstance(obj, dict):
        return [x for k, v in obj.items() for x in _leaves(v, (*path, k))]
    if isinstance(obj, list):
        return [x for i, v in enumerate(obj) for x in _leaves(v, (*path, i))]
    return [(path, obj)]


def _keys(obj: Any, path: tuple = ()) -> set[tuple]:
    """Every dict key path (list indexes kept)."""
    out: set[tuple] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add((*path, k))
            out |= _keys(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out |= _keys(v, (*path, i))
    return out


def _strings(obj: Any) -> set[str]:
    return {v for _, v in _leaves(obj) if isinstance(v, str)}


def secrets_for(admin_view: dict, own_view: dict, own_legal: list) -> tuple[set[str], set[tuple]]:
    """(distinctive secret strings, key paths hidden from this viewer).  A
    string the viewer meets anyway (a value or key of its own view, a value in
    its own legal intents) is not distinctive: a hidden crew choice such as
    "merchant" is also a row name everyone sees; the feed checks below cover it."""
    mine = _strings(own_view) | _strings(own_legal) | {k for p in _keys(own_view) for k in p if isinstance(k, str)}
    hidden_strings = {s for s in _strings(admin_view) - mine if len(s) >= 2}
    hidden_keys = _keys(admin_view) - _keys(own_view)
    return hidden_strings, hidden_keys


def _interesting(admin: dict) -> bool:
    """A moment where secret choices are half made, when the game has them."""
    seats = admin.get("seats")
    if isinstance(seats, list) and seats and all(isinstance(s, dict) and "chosen" in s for s in seats):
        chosen = [s["chosen"] is not None for s in seats]
        return any(chosen) and not all(chosen)
    return True


def _play_partway(client, ctx, created: dict, rng: random.Random, engine) -> list[tuple[int, Any]]:
    """Play until an interesting moment (at least 3 intents, at most 120).
    Returns every intent answer with the seat that received it."""
    gid = created["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    answers = []
    for n in range(120):
        project_game(ctx.redis, ctx.store, gid)
        state = fold_stream(engine, ctx.store.read(gid))
        if n >= 3 and _interesting(engine.view(state, ADMIN)):
            break
        seat = rng.choice(engine.to_act(state))
        legal = client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[seat])).get_json()
        resp = client.post(
            f"/v1/games/{gid}/intents",
            json={"intent": rng.choice(legal["intents"]), "expected_version": legal["version"]},
            headers=auth(tokens[seat]),
        )
        assert resp.status_code == 201, resp.get_json()
        answers.append((seat, resp))
    project_game(ctx.redis, ctx.store, gid)
    return answers


def _fill(path: str, gid: str, game: str, player: str) -> str:
    return path.replace("{game_id}", gid).replace("{game}", game).replace("{handle}", player)


def _walk(client, spec: dict, gid: str, game: str, players: list[str], headers: dict, other_seat: int) -> list[str]:
    """Every GET in the spec, with its useful query variants; body + headers."""
    got = []
    for path, ops in spec["paths"].items():
        if "get" not in ops:
            continue
        for player in players:
            base = _fill(path, gid, game, player)
            variants = [base]
            if path.endswith("/events"):
                variants += [base + "?after=0", base + "?after=3"]
            if path.endswith("/state"):
                variants += [base + "?version=2", base + f"?seat={other_seat}"]
            if path.endswith("{game_id}") or path.endswith("/legal"):
                variants += [base + "?min_version=1"]
            if path == "/v1/games":
                variants += [base + f"?player={player}", base + f"?game={game}&status=active"]
            for url in variants:
                resp = client.get(url, headers=headers)
                head = "\n".join(f"{k}: {v}" for k, v in resp.headers.items())
                got.append(f"GET {url} -> {resp.status_code}\n{head}\n{resp.get_data(as_text=True)}")
            if "{handle}" not in path:
                break
    return got


def _probe_refusals(client, gid: str, token: str, own_legal: list[dict], version: int) -> list[str]:
    """Refused intents of this seat: unknown type, stale version, wrong shape."""
    bodies: list[dict] = [
        {"intent": {"type": "peek_at_everything"}},
        {"intent": {"type": "x"}, "expected_version": version + 100},
        {"intent": []},
    ]
    if own_legal:
        bodies.append({"intent": own_legal[0], "expected_version": max(0, version - 1)})
        bodies.append({"intent": {**own_legal[0], "unexpected": 1}})
    out = []
    for body in bodies:
        resp = client.post(f"/v1/games/{gid}/intents", json=body, headers=auth(token))
        assert resp.status_code >= 400, body
        out.append(f"POST -> {resp.status_code}\n{resp.get_data(as_text=True)}")
    return out


def _assert_no_leak(texts: list[str], hidden: set[str], who: str) -> None:
    for text in texts:
        for secret in hidden:
            # Whole-token match, so "SC1" does not match inside "SC12".
            if re.search(r"(?<![A-Za-z0-9_\-])" + re.escape(secret) + r"(?![A-Za-z0-9_\-])", text):
                pytest.fail(f"{who} can see hidden {secret!r} in:\n{text[:1500]}")


@pytest.mark.parametrize("game", registry.names())
def test_every_endpoint_as_every_seat_and_spectator(client, ctx, new_game, game):
    engine = registry.get(game)
    created = new_game(game=game, players=["ann", "bob"])
    gid = created["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    answers = _play_partway(client, ctx, created, random.Random(31), engine)
    events = ctx.store.read(gid)
    state = fold_stream(engine, events)
    admin = json.loads(json.dumps(engine.view(state, ADMIN)))
    spec = client.get("/openapi.json").get_json()
    any_secret = False

    for viewer in [0, 1, None]:
        own = json.loads(json.dumps(engine.view(state, viewer)))
        own_legal = [c.to_json() for c in engine.legal(state, viewer)] if viewer is not None else []
        hidden, hidden_keys = secrets_for(admin, own, own_legal)
        any_secret = any_secret or bool(hidden or hidden_keys)
        headers = auth(tokens[viewer]) if viewer is not None else {}
        who = f"{game} seat {viewer}" if viewer is not None else f"{game} spectator"
        other = 1 if viewer == 0 else 0
        texts = _walk(client, spec, gid, game, ["ann", "bob"], headers, other)
        if viewer is not None:
            legal = client.get(f"/v1/games/{gid}/legal", headers=headers).get_json()
            texts += _probe_refusals(client, gid, tokens[viewer], legal["intents"], legal["version"])
            texts += [r.get_data(as_text=True) for seat, r in answers if seat == viewer]
        _assert_no_leak(texts, hidden, who)

        # The game view this viewer gets has none of the keys hidden from it.
        view = client.get(f"/v1/games/{gid}", headers=headers).get_json()["view"]
        leaked = _keys(view) & hidden_keys
        assert not leaked, f"{who}: view carries hidden keys {sorted(leaked)[:5]}"

        # The feed line of every event is exactly the engine's redaction for
        # this viewer, and never carries another seat's intent.
        feed = client.get(f"/v1/games/{gid}/events", headers=headers).get_data(as_text=True)
        lines = [json.loads(x) for x in feed.splitlines() if x.strip()]
        assert [x["seq"] for x in lines] == [e.seq for e in events]
        for line, e in zip(lines, events, strict=True):
            if e.type not in PLATFORM_EVENTS:
                assert line["data"] == engine.redact_event(Event(e.type, e.data), viewer).data, (who, e.seq)
            if e.meta.get("seat") != viewer:
                assert line["meta"].get("intent") is None, (who, e.seq)

    # The walk must have had something to protect, where the game hides anything.
    if game == "waters-of-nereus":
        assert any_secret
