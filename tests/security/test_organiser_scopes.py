"""Organiser keys have the organiser's rights over the games they created and
no other (docs/API.md "Accounts and keys"): hidden information of running
games, time travel, audit, export and abort.  Another organiser, a player's
key, a rotated key and the operator are each answered as the table in the
README says, with a stable code and nothing written."""

from __future__ import annotations

import random

import pytest
from support import auth
from support.accounts import accept_invitations, organiser, register, unique

from projections.runner import project_game

#: What only the game's organiser (or the operator) may do while it runs.
ORGANISER_PATHS = ["/state", "/state?version=1", "/audit", "/export"]


@pytest.fixture
def world(client, ctx, settings):
    """Two organisers; organiser A's running game of two accounts (Waters of
    Nereus: it hides things), a few intents in."""
    cup, cup_key = organiser(client, settings)
    other, other_key = organiser(client, settings, unique("open"))
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    created = client.post(
        "/v1/games",
        json={"game": "waters-of-nereus", "players": [ann, bob], "accounts": True, "rated": True},
        headers=auth(cup_key),
    )
    assert created.status_code == 201, created.get_json()
    accept_invitations(client, [ann_key, bob_key])
    gid = created.get_json()["id"]
    keys = {0: ann_key, 1: bob_key}
    rng = random.Random(5)
    for _ in range(4):
        project_game(ctx.redis, ctx.store, gid)
        game = client.get(f"/v1/games/{gid}").get_json()
        seat = rng.choice(game["to_act"])
        legal = client.get(f"/v1/games/{gid}/legal", headers=auth(keys[seat])).get_json()
        intents = [i for i in legal["intents"] if i["type"] != "resign"]
        resp = client.post(
            f"/v1/games/{gid}/intents",
            json={"intent": rng.choice(intents), "expected_version": legal["version"]},
            headers=auth(keys[seat]),
        )
        assert resp.status_code == 201, resp.get_json()
    project_game(ctx.redis, ctx.store, gid)
    return {"gid": gid, "cup": cup_key, "other": other_key, "ann": ann_key, "bob": bob_key, "cup_handle": cup}


@pytest.mark.parametrize("suffix", ORGANISER_PATHS)
def test_only_the_games_organiser_and_the_operator(client, ctx, settings, world, suffix):
    path = f"/v1/games/{world['gid']}{suffix}"
    assert client.get(path, headers=auth(world["cup"])).status_code == 200
    assert client.get(path, headers=auth(settings.admin_token)).status_code == 200
    other = client.get(path, headers=auth(world["other"]))
    assert other.status_code == 403 and other.get_json()["error"]["code"] == "not_your_game"
    player = client.get(path, headers=auth(world["ann"]))
    assert player.status_code == 403 and player.get_json()["error"]["code"] == "organiser_key_required"
    assert client.get(path).status_code == 401
    assert client.get(path, headers=auth("qdk_" + "A" * 43)).status_code == 403


def test_another_organiser_sees_only_what_a_spectator_sees(client, settings, world):
    gid = world["gid"]
    public = client.get(f"/v1/games/{gid}").get_json()
    mine = client.get(f"/v1/games/{gid}", headers=auth(world["cup"])).get_json()
    theirs = client.get(f"/v1/games/{gid}", headers=auth(world["other"])).get_json()
    admin = client.get(f"/v1/games/{gid}", headers=auth(settings.admin_token)).get_json()
    assert mine["view"] == admin["view"] != public["view"]
    assert theirs["view"] == public["view"] and theirs["seat"] is None
    assert mine["created_by"] == world["cup_handle"]
    # The events feed: redacted for the other organiser, whole for the game's.
    full = client.get(f"/v1/games/{gid}/events", headers=auth(world["cup"])).get_data(as_text=True)
    other = client.get(f"/v1/games/{gid}/events", headers=auth(world["other"])).get_data(as_text=True)
    spectator = client.get(f"/v1/games/{gid}/events").get_data(as_text=True)
    assert '"redacted":true' not in full.replace(" ", "")
    assert other == spectator and '"redacted":true' in other.replace(" ", "")
    # Legal intents belong to seats, not to organisers.
    assert client.get(f"/v1/games/{gid}/legal", headers=auth(world["cup"])).status_code == 403


def test_abort_is_the_games_organisers_or_the_operators(client, ctx, world):
    gid = world["gid"]
    before = ctx.store.version(gid)
    for key, code in [(world["other"], "not_your_game"), (world["ann"], "organiser_key_required")]:
        resp = client.post(f"/v1/games/{gid}/abort", json={"reason": "x"}, headers=auth(key))
        assert resp.status_code == 403 and resp.get_json()["error"]["code"] == code
    assert ctx.store.version(gid) == before
    done = client.post(f"/v1/games/{gid}/abort", json={"reason": "no-show"}, headers=auth(world["cup"]))
    assert done.status_code == 200, done.get_json()
    assert [e.type for e in ctx.store.read(gid, after=before)][-2:] == ["GameAborted", "GameFinished"]


def test_a_rotated_organiser_key_loses_its_rights_at_once(client, world):
    gid = world["gid"]
    new = client.post("/v1/account/key", headers=auth(world["cup"])).get_json()["key"]
    resp = client.get(f"/v1/games/{gid}/state", headers=auth(world["cup"]))
    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "invalid_token"
    assert client.get(f"/v1/games/{gid}", headers=auth(world["cup"])).status_code == 403
    assert client.get(f"/v1/games/{gid}/state", headers=auth(new)).status_code == 200


def test_an_organisers_casual_game_is_its_own(client, ctx, settings):
    _, cup_key = organiser(client, settings)
    _, other_key = organiser(client, settings, unique("open"))
    created = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]}, headers=auth(cup_key))
    gid = created.get_json()["id"]
    assert created.get_json().get("rated") is None and all("token" in s for s in created.get_json()["seats"])
    project_game(ctx.redis, ctx.store, gid)
    assert client.get(f"/v1/games/{gid}/audit", headers=auth(cup_key)).status_code == 200
    assert client.get(f"/v1/games/{gid}/audit", headers=auth(other_key)).status_code == 403
    # A game nobody's key created: organisers have no rights over it.
    anonymous = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]}).get_json()
    assert client.get(f"/v1/games/{anonymous['id']}/state", headers=auth(cup_key)).status_code == 403
