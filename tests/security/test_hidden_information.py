"""Hidden information leaves through no endpoint, header or error message.

For every registered engine: a two-seat game is played partway (for a game
with secret choices, to a point where one seat has chosen and the other not),
then every GET endpoint of ``/openapi.json``, and every page for people, is
walked as each seat and as a spectator, and refused intents are sent as each seat.  What a viewer may not
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
from service.domain.pipeline import PLATFORM_EVENTS
from service.domain.replay import fold_stream
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
                if path.endswith("/stream"):
                    got += _stream_heads(client, url, headers)  # it would not end by itself
                    continue
                resp = client.get(url, headers=headers)
                head = "\n".join(f"{k}: {v}" for k, v in resp.headers.items())
                got.append(f"GET {url} -> {resp.status_code}\n{head}\n{resp.get_data(as_text=True)}")
            if "{handle}" not in path:
                break
    return got


def _walk_pages(client, gid: str, game: str, players: list[str], headers: dict, other_seat: int) -> list[str]:
    """The pages for people (service/http/pages.py) with the same header: each
    must show no more than the JSON API shows this viewer."""
    urls = [
        "/",
        "/games",
        f"/games?game={game}&status=active",
        f"/games/{gid}",
        f"/games/{gid}?partial=1",
        f"/games/{gid}?log=all",
        f"/games/{gid}?at=2",
        f"/games/{gid}?seat={other_seat}",
        f"/games/{gid}/board",
        f"/games/{gid}/board?min_version=1",
        f"/games/{gid}/board?at=3&seat={other_seat}",
        f"/games/{gid}/log",
        f"/games/{gid}/log?after=3",
        f"/games/{gid}/audit",
        f"/leaderboards/{game}",
        *[f"/players/{p}" for p in players],
    ]
    got = []
    for url in urls:
        resp = client.get(url, headers={**headers, "Accept": "text/html"})
        head = "\n".join(f"{k}: {v}" for k, v in resp.headers.items())
        got.append(f"PAGE {url} -> {resp.status_code}\n{head}\n{resp.get_data(as_text=True)}")
    return got


def _stream_heads(client, url: str, headers: dict) -> list[str]:
    """A stream (service/http/streams.py), NDJSON and SSE: its status, headers
    and what it sends up to its first board line (it runs until the game ends)."""
    got = []
    for extra in ({}, {"Accept": "text/event-stream"}):
        resp = client.get(url, headers={**headers, **extra}, buffered=False)
        body = b""
        for chunk in resp.response:
            body += chunk if isinstance(chunk, bytes) else chunk.encode()
            if resp.status_code == 200 and b"board" in body and body.endswith(b"\n"):
                break
        resp.close()
        head = "\n".join(f"{k}: {v}" for k, v in resp.headers.items())
        got.append(f"GET {url} {extra} -> {resp.status_code}\n{head}\n{body.decode()}")
    return got


def _next_board(resp) -> dict:
    """The next board line of an open NDJSON stream (pings skipped)."""
    for chunk in resp.response:
        line = json.loads(chunk)
        if line["type"] == "board":
            return line
    raise AssertionError("the stream ended without a board line")


def _probe_refusals(client, gid: str, token: str, own_legal: list[dict], version: int) -> list[str]:
    """Refused intents of this seat: unknown type, stale version, wrong shape."""
    bodies: list[dict] = [
        {"intent": {"type": "peek_at_everything"}},
        {"intent": {"type": "x"}, "expected_version": version + 100},
        {"intent": []},
    ]
    if own_legal:
        # Stale past the setup's events: it cannot commute (docs/API.md, "Version conflicts").
        bodies.append({"intent": own_legal[0], "expected_version": 1})
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
        texts += _walk_pages(client, gid, game, ["ann", "bob"], headers, other)
        if viewer is not None:
            legal = client.get(f"/v1/games/{gid}/legal", headers=headers).get_json()
            texts += _probe_refusals(client, gid, tokens[viewer], legal["intents"], legal["version"])
            texts += [r.get_data(as_text=True) for seat, r in answers if seat == viewer]
        _assert_no_leak(texts, hidden, who)

        # The game view this viewer gets has none of the keys hidden from it.
        view = client.get(f"/v1/games/{gid}", headers=headers).get_json()["view"]
        leaked = _keys(view) & hidden_keys
        assert not leaked, f"{who}: view carries hidden keys {sorted(leaked)[:5]}"

        # Its stream's first line is exactly what GET shows it (and, for a seat, /legal).
        stream = client.get(f"/v1/games/{gid}/stream", headers=headers, buffered=False)
        first = _next_board(stream)
        stream.close()
        assert {k: v for k, v in first.items() if k not in ("type", "legal")} == client.get(
            f"/v1/games/{gid}", headers=headers
        ).get_json(), who
        if viewer is not None:
            assert first["legal"] == legal["intents"], who
        else:
            assert "legal" not in first

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

    # A change while streams are open: each viewer's next line is what GET
    # then shows it, and carries nothing hidden from it.
    viewers = {0: auth(tokens[0]), 1: auth(tokens[1]), None: {}}
    streams = {v: client.get(f"/v1/games/{gid}/stream", headers=h, buffered=False) for v, h in viewers.items()}
    firsts = {v: _next_board(s) for v, s in streams.items()}
    seat = random.Random(5).choice(engine.to_act(state))
    legal = client.get(f"/v1/games/{gid}/legal", headers=viewers[seat]).get_json()
    moved = client.post(
        f"/v1/games/{gid}/intents",
        json={"intent": legal["intents"][0], "expected_version": legal["version"]},
        headers=viewers[seat],
    )
    assert moved.status_code == 201
    project_game(ctx.redis, ctx.store, gid)  # the worker's write, and its announcement
    state = fold_stream(engine, ctx.store.read(gid))
    admin = json.loads(json.dumps(engine.view(state, ADMIN)))
    for viewer, stream in streams.items():
        who = f"{game} stream of {'seat ' + str(viewer) if viewer is not None else 'a spectator'}"
        line = _next_board(stream)
        stream.close()
        assert line["version"] > firsts[viewer]["version"], who
        got = client.get(f"/v1/games/{gid}", headers=viewers[viewer]).get_json()
        assert {k: v for k, v in line.items() if k not in ("type", "legal")} == got, who
        own = json.loads(json.dumps(engine.view(state, viewer)))
        own_legal = [c.to_json() for c in engine.legal(state, viewer)] if viewer is not None else []
        hidden, hidden_keys = secrets_for(admin, own, own_legal)
        _assert_no_leak([json.dumps(line)], hidden, who)
        assert not _keys(line["view"]) & hidden_keys, who

    # The walk must have had something to protect, where the game hides anything.
    if game == "waters-of-nereus":
        assert any_secret


@pytest.fixture
def short_streams(settings):
    """The app with streams that end after a moment: an account's key opens
    its own stream (``/v1/account/stream``), which has no board line to stop at."""
    from service.http.app import create_app

    application = create_app(settings.with_(stream_max_seconds=1.0), TESTING=True)
    yield application.test_client()
    application.extensions["quarterdeck"].store.pool.close()


def test_account_keys_and_organiser_scopes_see_no_more(short_streams, ctx, settings):
    """The same walk with account keys (a game of accounts seated by an
    organiser): each seat's key sees what that seat sees; another organiser's
    key and the key of a player with no seat see what a spectator sees; only
    the game's own organiser sees everything."""
    from support.accounts import accept_invitations, organiser, register, unique

    client = short_streams
    game = "waters-of-nereus"
    engine = registry.get(game)
    _, cup = organiser(client, settings)
    _, other_cup = organiser(client, settings, unique("open"))
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    _, stranger = register(client, unique("cy"))
    created = client.post(
        "/v1/games",
        json={"game": game, "players": [ann, bob], "accounts": True, "rated": True},
        headers=auth(cup),
    ).get_json()
    accept_invitations(client, [ann_key, bob_key])
    gid = created["id"]
    # The seats' keys stand where a casual game's tokens would.
    _play_partway(client, ctx, {"id": gid, "seats": [{"seat": 0, "token": ann_key}, {"seat": 1, "token": bob_key}]},
                  random.Random(31), engine)  # fmt: skip
    state = fold_stream(engine, ctx.store.read(gid))
    admin = json.loads(json.dumps(engine.view(state, ADMIN)))
    spec = client.get("/openapi.json").get_json()
    assert client.get(f"/v1/games/{gid}", headers=auth(cup)).get_json()["view"] == admin
    for who, key, viewer in [
        ("seat 0's key", ann_key, 0),
        ("seat 1's key", bob_key, 1),
        ("another organiser's key", other_cup, None),
        ("a player's key with no seat", stranger, None),
    ]:
        own = json.loads(json.dumps(engine.view(state, viewer)))
        own_legal = [c.to_json() for c in engine.legal(state, viewer)] if viewer is not None else []
        hidden, hidden_keys = secrets_for(admin, own, own_legal)
        assert hidden or hidden_keys, who
        texts = _walk(client, spec, gid, game, [ann, bob], auth(key), 1 if viewer == 0 else 0)
        _assert_no_leak(texts, hidden, f"{game}: {who}")
        got = client.get(f"/v1/games/{gid}", headers=auth(key)).get_json()
        assert got["seat"] == viewer and not _keys(got["view"]) & hidden_keys, who
        if viewer is None:
            # Exactly the spectator's feed.
            feed = client.get(f"/v1/games/{gid}/events", headers=auth(key)).get_data(as_text=True)
            assert feed == client.get(f"/v1/games/{gid}/events").get_data(as_text=True), who


def test_a_running_tournaments_pages_show_no_secrets(app, client, ctx, settings):
    """The tournament pages (``/tournaments/{id}``, its partial and earlier-round
    forms, and the home page's section) as a spectator and as each player: a
    running tournament's seed, and what its tables' running games hide from that
    viewer, appear nowhere."""
    from support.tournaments import run_tournament

    game = "waters-of-nereus"
    engine = registry.get(game)
    t = run_tournament(app, ctx, settings, name="Secret Cup", game=game, players=4, table_size=4, played_rounds=0)
    tid = t["id"]
    seed = ctx.tournament_store.seed(tid)
    tables = client.get(f"/v1/tournaments/{tid}/rounds/1").get_json()["tables"]
    assert tables and all(table["status"] == "playing" for table in tables)
    states = {}
    for table in tables:
        seats = [{"seat": i, "token": t["keys"][h]} for i, h in enumerate(table["players"])]
        _play_partway(client, ctx, {"id": table["game_id"], "seats": seats}, random.Random(17), engine)
        states[table["game_id"]] = (table["players"], fold_stream(engine, ctx.store.read(table["game_id"])))
    urls = ["/", f"/tournaments/{tid}", f"/tournaments/{tid}?partial=1", f"/tournaments/{tid}?round=1"]
    any_secret = False
    for viewer in [None, *t["keys"]]:
        hidden: set[str] = {seed.hex()}
        for players, state in states.values():
            seat = players.index(viewer) if viewer in players else None
            admin = json.loads(json.dumps(engine.view(state, ADMIN)))
            own = json.loads(json.dumps(engine.view(state, seat)))
            own_legal = [c.to_json() for c in engine.legal(state, seat)] if seat is not None else []
            strings, keys = secrets_for(admin, own, own_legal)
            hidden |= strings
            any_secret = any_secret or bool(strings or keys)
        headers = auth(t["keys"][viewer]) if viewer is not None else {}
        texts = []
        for url in urls:
            resp = client.get(url, headers={**headers, "Accept": "text/html"})
            assert resp.status_code == 200, url
            texts.append(f"PAGE {url}\n{resp.get_data(as_text=True)}")
        _assert_no_leak(texts, hidden, f"tournament pages as {viewer or 'a spectator'}")
        if viewer is None:  # the check can see a secret: the organiser's full view of a table shows one
            full = client.get(f"/v1/games/{tables[0]['game_id']}", headers=auth(t["organiser_key"]))
            with pytest.raises(pytest.fail.Exception):
                _assert_no_leak([full.get_data(as_text=True)], hidden, "the organiser's view")
    assert any_secret  # the walk had something to protect
