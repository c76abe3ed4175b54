"""docs/API.md "Games" over HTTP (Flask test client, real PostgreSQL and Redis)."""

from __future__ import annotations

import json

import pytest
from support import auth

from projections.runner import project_game


def _stream_len(ctx, gid: str) -> int:
    return ctx.store.version(gid)


def _first_move(client, game):
    gid = game["id"]
    view = client.get(f"/v1/games/{gid}").get_json()
    seat = view["to_act"][0]
    token = game["seats"][seat]["token"]
    legal = client.get(f"/v1/games/{gid}/legal", headers=auth(token)).get_json()
    return gid, seat, token, legal


def test_create_answers_api_shape(client, new_game):
    game = new_game(players=["ann", "bob"])
    assert set(game) >= {"id", "game", "version", "seed_commitment", "seats"}
    assert len(game["seed_commitment"]) == 64
    assert [s["seat"] for s in game["seats"]] == [0, 1]
    assert len({s["token"] for s in game["seats"]}) == 2


def test_get_game_public_and_seat_views(client, new_game, ctx):
    game = new_game()
    gid = game["id"]
    body = client.get(f"/v1/games/{gid}").get_json()
    assert body["status"] == "active" and body["version"] == game["version"]
    assert body["result"] is None and body["to_act"]
    seat_view = client.get(f"/v1/games/{gid}", headers=auth(game["seats"][1]["token"])).get_json()
    assert seat_view["seat"] == 1


def test_post_intent_and_read_your_writes(client, new_game):
    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    resp = client.post(
        f"/v1/games/{gid}/intents",
        json={"intent": legal["intents"][0], "expected_version": legal["version"]},
        headers=auth(token),
    )
    assert resp.status_code == 201
    body = resp.get_json()
    assert body["version"] > legal["version"]
    assert [e["seq"] for e in body["events"]] == list(range(legal["version"] + 1, body["version"] + 1))
    # No worker ran: the wait for min_version must not return an older version
    # silently forever -- it times out and answers with what it has...
    stale = client.get(f"/v1/games/{gid}?min_version={body['version']}").get_json()
    assert stale["version"] <= body["version"]


def test_min_version_waits_for_the_worker(new_game, ctx, settings):
    """Read-your-writes: a real worker process projects while the GET waits
    (with a wait bound long enough for a worker to start on a busy machine)."""
    from service.http.app import create_app

    patient = create_app(settings.with_(max_wait_seconds=60.0), TESTING=True)
    client = patient.test_client()
    import os
    import subprocess
    import sys
    import threading
    import time

    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    resp = client.post(f"/v1/games/{gid}/intents", json={"intent": legal["intents"][0]}, headers=auth(token))
    v = resp.get_json()["version"]

    env = os.environ | {
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "QD_QUEUE": settings.queue_name,
        "QD_LOG_LEVEL": "WARNING",
        # A burst worker drains every job queued on the session's queue; without lingering
        # after each (1 s by default) it is done in time, however many earlier tests left.
        "QD_PROJECTION_LINGER": "0",
    }

    def later() -> None:
        time.sleep(0.3)
        subprocess.run([sys.executable, "-m", "workers", "--burst"], env=env, check=True, timeout=60)

    t = threading.Thread(target=later)
    t.start()
    body = client.get(f"/v1/games/{gid}?min_version={v}").get_json()
    t.join()
    assert body["version"] == v
    legal2 = client.get(f"/v1/games/{gid}/legal?min_version={v}", headers=auth(token)).get_json()
    assert legal2["version"] == v
    patient.extensions["quarterdeck"].store.pool.close()


def test_idempotent_retry_returns_first_answer_and_appends_nothing(client, new_game, ctx):
    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    body = {"intent": legal["intents"][0], "expected_version": legal["version"]}
    headers = auth(token) | {"Idempotency-Key": "k-1"}
    first = client.post(f"/v1/games/{gid}/intents", json=body, headers=headers)
    assert first.status_code == 201
    length = _stream_len(ctx, gid)
    again = client.post(f"/v1/games/{gid}/intents", json=body, headers=headers)
    assert again.status_code == 201
    assert again.get_json()["version"] == first.get_json()["version"]
    assert again.get_json()["events"] == first.get_json()["events"]
    assert again.get_json()["replayed"] is True
    assert _stream_len(ctx, gid) == length
    other = dict(body, expected_version=first.get_json()["version"])
    refused = client.post(f"/v1/games/{gid}/intents", json=other, headers=headers)
    assert refused.status_code == 422
    assert refused.get_json()["error"]["code"] == "idempotency_key_reused"
    assert _stream_len(ctx, gid) == length


def test_intent_answers_are_sent_as_their_schema_dumps_them(client, new_game):
    """The view sends the answer without dumping it through IntentOut (it is built in that
    shape): a new answer and a replayed one must be exactly what the schema would send."""
    from schemas.http import IntentOut

    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    body = {"intent": legal["intents"][0], "expected_version": legal["version"]}
    headers = auth(token) | {"Idempotency-Key": "k-shape"}
    for resp in (client.post(f"/v1/games/{gid}/intents", json=body, headers=headers) for _ in range(2)):
        assert resp.status_code == 201
        sent = resp.get_json()
        assert IntentOut().validate(sent) == {}
        assert IntentOut().dump(sent) == sent
    assert sent["replayed"] is True


def test_stale_expected_version_is_409(client, new_game, ctx):
    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    ok = client.post(
        f"/v1/games/{gid}/intents",
        json={"intent": legal["intents"][0], "expected_version": legal["version"]},
        headers=auth(token),
    )
    assert ok.status_code == 201
    length = _stream_len(ctx, gid)
    stale = client.post(
        f"/v1/games/{gid}/intents",
        json={"intent": legal["intents"][0], "expected_version": legal["version"]},
        headers=auth(token),
    )
    assert stale.status_code == 409
    assert stale.get_json()["error"]["code"] == "version_conflict"
    assert _stream_len(ctx, gid) == length


BAD_BODIES = [
    ("malformed json", b"{not json", "application/json", 400, "malformed_json"),
    ("not an object", b"[1, 2]", "application/json", 400, "malformed_json"),
    ("wrong content type", b'{"intent": {}}', "text/plain", 415, "unsupported_media_type"),
    ("unknown top-level field", b'{"intent": {"type": "x"}, "bogus": 1}', "application/json", 422, "validation_error"),
    ("intent missing", b'{"expected_version": 3}', "application/json", 422, "validation_error"),
    ("intent wrong type", b'{"intent": 5}', "application/json", 422, "validation_error"),
    ("version wrong type", b'{"intent": {"type": "x"}, "expected_version": "3"}', "application/json", 422, None),
    ("version float", b'{"intent": {"type": "x"}, "expected_version": 3.5}', "application/json", 422, None),
    ("unknown intent type", b'{"intent": {"type": "teleport"}}', "application/json", 422, "invalid_intent"),
    ("deep json", b'{"intent": ' + b"[" * 200 + b"]" * 200 + b"}", "application/json", 400, "json_too_deep"),
    (
        "huge number",
        b'{"intent": {"type": "x"}, "expected_version": 1' + b"0" * 5000 + b"}",
        "application/json",
        400,
        "malformed_json",
    ),
    ("oversized", b'{"intent": {"type": "' + b"a" * 70000 + b'"}}', "application/json", 413, "body_too_large"),
]


@pytest.mark.parametrize("name,raw,ctype,status,code", BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_input_is_refused_and_changes_nothing(client, new_game, ctx, name, raw, ctype, status, code):
    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    length = _stream_len(ctx, gid)
    resp = client.post(f"/v1/games/{gid}/intents", data=raw, headers=auth(token) | {"Content-Type": ctype})
    assert resp.status_code == status, resp.get_data()
    err = resp.get_json()["error"]
    assert set(err) == {"code", "message", "details"}
    if code:
        assert err["code"] == code
    assert _stream_len(ctx, gid) == length


def test_illegal_intents_are_422_with_a_rule_code(client, new_game, ctx):
    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    length = _stream_len(ctx, gid)
    other = game["seats"][(seat + 1) % 3]["token"]
    resp = client.post(f"/v1/games/{gid}/intents", json={"intent": legal["intents"][0]}, headers=auth(other))
    assert resp.status_code == 422
    assert resp.get_json()["error"]["code"] == "not_your_turn"
    assert _stream_len(ctx, gid) == length


@pytest.mark.parametrize(
    "headers,status,code",
    [
        ({}, 401, "token_required"),
        ({"Authorization": "Bearer nope"}, 403, "invalid_token"),
        ({"Authorization": "Basic abc"}, 401, "token_required"),
    ],
)
def test_tokens(client, new_game, ctx, headers, status, code):
    game = new_game()
    gid, seat, token, legal = _first_move(client, game)
    length = _stream_len(ctx, gid)
    resp = client.post(f"/v1/games/{gid}/intents", json={"intent": legal["intents"][0]}, headers=headers)
    assert resp.status_code == status
    assert resp.get_json()["error"]["code"] == code
    assert client.get(f"/v1/games/{gid}/legal", headers=headers).status_code == status
    assert _stream_len(ctx, gid) == length


def test_a_token_of_another_game_is_refused(client, new_game, ctx):
    a, b = new_game(), new_game()
    gid, seat, token, legal = _first_move(client, a)
    resp = client.post(
        f"/v1/games/{gid}/intents", json={"intent": legal["intents"][0]}, headers=auth(b["seats"][seat]["token"])
    )
    assert resp.status_code == 403


@pytest.mark.parametrize("path", ["/v1/games/not-a-uuid", "/v1/games/..%2F..%2Fetc%2Fpasswd", "/v1/games/%00"])
def test_unknown_or_malformed_ids_are_404_json(client, path):
    resp = client.get(path)
    assert resp.status_code == 404
    assert resp.get_json()["error"]["code"] in {"not_found", "game_not_found"}


def test_unknown_game_id_404(client):
    import uuid

    resp = client.get(f"/v1/games/{uuid.uuid4()}")
    assert resp.status_code == 404
    assert resp.get_json()["error"]["code"] == "game_not_found"
    resp = client.post(f"/v1/games/{uuid.uuid4()}/intents", json={"intent": {"type": "x"}})
    assert resp.status_code == 404


@pytest.mark.parametrize(
    "body,code",
    [
        ({"game": "chess", "players": ["a", "b"]}, "validation_error"),
        ({"game": "nautilus-industries", "players": ["a"]}, "invalid_player_count"),
        ({"game": "nautilus-industries", "players": ["a", "a"]}, "duplicate_players"),
        ({"game": "nautilus-industries", "players": ["a", "b"], "options": {"x": 1}}, "invalid_options"),
        ({"game": "nautilus-industries", "players": ["a", "b/../c"]}, "validation_error"),
        ({"game": "nautilus-industries"}, "validation_error"),
    ],
)
def test_create_refusals(client, body, code):
    resp = client.post("/v1/games", json=body)
    assert resp.status_code == 422, resp.get_json()
    assert resp.get_json()["error"]["code"] == code


def test_list_games_newest_first(client, new_game, ctx):
    made = [new_game(players=["lister", f"x{i}"]) for i in range(3)]
    for g in made:
        project_game(ctx.redis, ctx.store, g["id"])
    mine = {g["id"] for g in made}
    ids = [g["id"] for g in client.get("/v1/games?limit=500").get_json()["games"] if g["id"] in mine]
    assert ids == [g["id"] for g in reversed(made)]
    # Names in a casual game are guests': they list the game under no player.
    assert client.get("/v1/games?player=lister").get_json()["total"] == 0


def test_service_endpoints(client):
    assert client.get("/healthz").get_json()["status"] == "ok"
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.get_json()["checks"] == {"postgres": "ok", "redis": "ok"}
    metrics = client.get("/metrics").get_data(as_text=True)
    assert "qd_intents_total" in metrics
    spec = client.get("/openapi.json").get_json()
    assert "/v1/games/{game_id}/intents" in spec["paths"]
    assert json.dumps(spec)  # serialisable
