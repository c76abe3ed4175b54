"""Consent (docs/API.md, "Consent"; service/adapters/invitations.py), over HTTP against
real PostgreSQL and Redis: an organiser's game of accounts and its registration by
handles are invitations; nothing is seated or registered until each account accepts
with its own key; a decline ends a pending game; invitations expire; the account
stream announces them; an inviter's pending invitations are capped."""

from __future__ import annotations

import json
import threading
import time

import psycopg
import pytest
from support import auth
from support.accounts import accept_invitations, organiser, register, unique

from projections.runner import project_game


def pending(client, key: str) -> list[dict]:
    resp = client.get("/v1/account/invitations", headers=auth(key))
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()["invitations"]


def answer(client, invitation_id: str, key: str | None, verb: str = "accept"):
    return client.post(f"/v1/invitations/{invitation_id}/{verb}", headers=auth(key) if key else {})


@pytest.fixture
def three(client, settings):
    _, cup_key = organiser(client, settings)
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    return cup_key, {ann: ann_key, bob: bob_key}


def invite_game(client, cup_key: str, players: list[str], **extra) -> dict:
    body = {"game": "nauticus", "players": players, "accounts": True, "rated": True} | extra
    resp = client.post("/v1/games", json=body, headers=auth(cup_key))
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def test_an_organisers_game_of_accounts_starts_only_once_every_account_accepts(client, ctx, three):
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    created = invite_game(client, cup_key, [ann, bob])
    gid = created["id"]
    assert created["status"] == "invited" and created["players"] == [ann, bob]
    assert {i["player"]: i["status"] for i in created["invitations"]} == {ann: "pending", bob: "pending"}
    assert ctx.store.game(gid) is None, "a game seated without consent"
    mine = pending(client, ann_key)
    assert [(i["kind"], i["game_id"], i["rated"], i["players"]) for i in mine] == [("game", gid, True, [ann, bob])]
    assert mine[0]["expires_at"] > mine[0]["created_at"]

    first = answer(client, mine[0]["id"], ann_key)
    assert first.status_code == 200 and first.get_json() == {
        "id": mine[0]["id"],
        "kind": "game",
        "game_id": gid,
        "status": "accepted",
    }
    shown = client.get(f"/v1/games/{gid}").get_json()
    assert shown["status"] == "invited" and ctx.store.game(gid) is None
    assert {i["player"]: i["status"] for i in shown["invitations"]} == {ann: "accepted", bob: "pending"}
    assert pending(client, ann_key) == []
    again = answer(client, mine[0]["id"], ann_key)
    assert again.status_code == 409 and again.get_json()["error"]["code"] == "invitation_answered"

    accept_invitations(client, [bob_key])
    opening = ctx.store.read(gid, upto=1)[0].data
    assert opening["players"] == [ann, bob] and opening["rated"] is True and opening["invited"] is True
    project_game(ctx.redis, ctx.store, gid)
    shown = client.get(f"/v1/games/{gid}", headers=auth(ann_key)).get_json()
    assert shown["status"] == "active" and shown["seat"] == 0 and shown["rated"] is True


def test_a_decline_ends_the_pending_game_and_cancels_the_other_invitations(client, ctx, three):
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    gid = invite_game(client, cup_key, [ann, bob])["id"]
    declined = answer(client, pending(client, bob_key)[0]["id"], bob_key, "decline")
    assert declined.status_code == 200 and declined.get_json()["status"] == "declined"
    assert pending(client, ann_key) == []
    shown = client.get(f"/v1/games/{gid}").get_json()
    assert shown["status"] == "declined"
    assert {i["player"]: i["status"] for i in shown["invitations"]} == {ann: "cancelled", bob: "declined"}
    assert ctx.store.game(gid) is None


def test_only_the_invited_accounts_own_key_answers(client, three):
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    invite_game(client, cup_key, [ann, bob])
    invitation = pending(client, ann_key)[0]["id"]
    _, stranger = register(client, unique("cy"))
    for key, status, code in [
        (bob_key, 404, "invitation_not_found"),  # another account's: not found, nothing told
        (stranger, 404, "invitation_not_found"),
        (cup_key, 403, "player_key_required"),
        (None, 401, "key_required"),
    ]:
        resp = answer(client, invitation, key)
        assert (resp.status_code, resp.get_json()["error"]["code"]) == (status, code)
    assert [i["id"] for i in pending(client, ann_key)] == [invitation]
    assert answer(client, "not-a-uuid", ann_key).status_code == 404


def test_invitations_expire(client, app, three, monkeypatch):
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    monkeypatch.setattr(app.extensions["quarterdeck"].invitations.store, "ttl_s", 1)
    gid = invite_game(client, cup_key, [ann, bob])["id"]
    invitation = pending(client, ann_key)[0]["id"]
    time.sleep(1.2)
    assert pending(client, ann_key) == []
    resp = answer(client, invitation, ann_key)
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "invitation_expired"
    assert client.get(f"/v1/games/{gid}").get_json()["status"] == "expired"


def test_an_inviters_pending_invitations_are_capped(client, app, three, monkeypatch):
    cup_key, keys = three
    (ann, _), (bob, bob_key) = keys.items()
    monkeypatch.setattr(app.extensions["quarterdeck"].invitations.store, "max_pending", 3)
    invite_game(client, cup_key, [ann, bob])
    resp = client.post(
        "/v1/games", json={"game": "nauticus", "players": [ann, bob], "accounts": True}, headers=auth(cup_key)
    )
    assert resp.status_code == 422 and resp.get_json()["error"]["code"] == "too_many_invitations"
    # An answer frees its place.
    accept_invitations(client, [bob_key])
    resp = client.post(
        "/v1/games", json={"game": "nauticus", "players": [ann, bob], "accounts": True}, headers=auth(cup_key)
    )
    assert resp.status_code == 201


def test_a_tournament_registration_by_handles_counts_only_once_accepted(client, three):
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    terms = {"name": "Consent Cup", "game": "nauticus", "table_size": 2, "rounds": 1}
    tid = client.post("/v1/tournaments", json=terms, headers=auth(cup_key)).get_json()["id"]
    resp = client.post(f"/v1/tournaments/{tid}/players", json={"handles": [ann, bob]}, headers=auth(cup_key))
    assert resp.status_code == 200 and resp.get_json()["players"] == []
    assert sorted(i["player"] for i in resp.get_json()["invitations"]) == sorted([ann, bob])
    mine = pending(client, ann_key)
    assert [(i["kind"], i["tournament_id"]) for i in mine] == [("tournament", tid)]
    accepted = answer(client, mine[0]["id"], ann_key)
    assert accepted.status_code == 200 and accepted.get_json()["tournament_id"] == tid
    # Registered by the accept; bob, who has not answered, is not.
    registered = client.post(f"/v1/tournaments/{tid}/players", json={"handles": [ann]}, headers=auth(cup_key))
    assert registered.status_code == 409 and registered.get_json()["error"]["code"] == "already_registered"
    started = client.post(f"/v1/tournaments/{tid}/start", headers=auth(cup_key))
    assert started.status_code == 422 and started.get_json()["error"]["code"] == "field_too_small"
    accept_invitations(client, [bob_key])
    started = client.post(f"/v1/tournaments/{tid}/start", headers=auth(cup_key))
    assert started.status_code == 200 and sorted(started.get_json()["players"]) == sorted([ann, bob])


def test_the_account_stream_announces_an_invitation(app, three):
    cup_key, keys = three
    (ann, ann_key), (bob, _) = keys.items()
    reader, writer = app.test_client(), app.test_client()
    made: list[str] = []

    def invite() -> None:
        time.sleep(0.5)  # once the stream below follows the account
        made.append(invite_game(writer, cup_key, [ann, bob])["id"])

    resp = reader.get("/v1/account/stream", headers=auth(ann_key), buffered=False)
    assert resp.status_code == 200
    thread = threading.Thread(target=invite)
    thread.start()
    seen = None
    deadline = time.monotonic() + 20
    for chunk in resp.response:
        line = json.loads(chunk)
        if line["type"] == "invitation":
            seen = line
            break
        assert time.monotonic() < deadline, "no invitation announced"
    thread.join()
    resp.close()
    assert seen is not None and seen["kind"] == "game" and seen["game_id"] == made[0]
    assert seen["invitation_id"] == pending(reader, ann_key)[0]["id"]
    # A stream opened later lists it at its start.
    again = reader.get("/v1/account/stream", headers=auth(ann_key), buffered=False)
    first = json.loads(next(iter(again.response)))
    again.close()
    assert (first["type"], first["invitation_id"]) == ("invitation", seen["invitation_id"])


def test_the_last_two_accepts_at_once_start_the_game_once(app, ctx, three):
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    client = app.test_client()
    gid = invite_game(client, cup_key, [ann, bob])["id"]
    ids = {key: pending(client, key)[0]["id"] for key in (ann_key, bob_key)}
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def accept(key: str) -> None:
        barrier.wait()
        codes.append(answer(app.test_client(), ids[key], key).status_code)

    threads = [threading.Thread(target=accept, args=(k,)) for k in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [200, 200]
    opening = ctx.store.read(gid, upto=1)
    assert [e.type for e in opening] == ["GameCreated"] and opening[0].data["players"] == [ann, bob]
    with ctx.store.pool.connection() as conn:
        assert conn.execute("SELECT status FROM pending_games WHERE game_id = %s", (gid,)).fetchone() == ("started",)


def test_the_accept_that_completes_a_game_nudges_it_once_after_the_commit(app, client, settings, three, monkeypatch):
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    told: list[tuple[str, tuple | None]] = []
    with psycopg.connect(settings.database_url, autocommit=True) as other:

        def nudge(game_id: str) -> None:
            # What another connection sees of the pending game when the nudge comes.
            row = other.execute("SELECT status FROM pending_games WHERE game_id = %s", (game_id,))
            told.append((game_id, row.fetchone()))

        monkeypatch.setattr(app.extensions["quarterdeck"].games, "nudge", nudge)
        gid = invite_game(client, cup_key, [ann, bob])["id"]
        accept_invitations(client, [ann_key])
        assert told == []
        accept_invitations(client, [bob_key])
    assert told == [(gid, ("started",))]


def test_a_last_accept_that_fails_after_creating_the_game_records_neither(app, client, ctx, three, monkeypatch):
    """The last accept, the game and the pending game marked started are one
    transaction: a failure at the last step leaves the invitation pending, no
    game, and nothing nudged; accepting again starts it."""
    cup_key, keys = three
    (ann, ann_key), (bob, bob_key) = keys.items()
    told: list[str] = []
    services = app.extensions["quarterdeck"]
    monkeypatch.setattr(services.games, "nudge", told.append)
    gid = invite_game(client, cup_key, [ann, bob])["id"]
    accept_invitations(client, [ann_key])
    invitation = pending(client, bob_key)[0]["id"]

    def fails(*_args) -> None:
        raise RuntimeError("the server fails as the pending game is marked started")

    with monkeypatch.context() as patched:
        patched.setattr(services.invitations.store, "started", fails)
        assert answer(client, invitation, bob_key).status_code == 500
    assert told == [] and ctx.store.game(gid) is None
    assert [i["id"] for i in pending(client, bob_key)] == [invitation]
    assert client.get(f"/v1/games/{gid}").get_json()["status"] == "invited"

    assert answer(client, invitation, bob_key).status_code == 200
    assert told == [gid] and ctx.store.game(gid) is not None


def test_a_game_the_rules_refuse_is_refused_before_anyone_is_invited(client, ctx, three):
    cup_key, keys = three
    (ann, ann_key), (bob, _) = keys.items()
    body = {"game": "waters-of-nereus", "players": [ann, bob], "accounts": True, "options": {"sails": 9}}
    resp = client.post("/v1/games", json=body, headers=auth(cup_key))
    assert resp.status_code == 422, resp.get_json()
    assert pending(client, ann_key) == []
