"""Organiser endpoints require ``ADMIN_TOKEN``; with it unset they are
disabled, not open -- whatever token is sent."""

from __future__ import annotations

import pytest
from support import auth

from projections.runner import project_game
from service.http.app import create_app

#: What only the organiser may do while a game runs.
ORGANISER_PATHS = ["/state", "/state?version=1", "/audit", "/export"]


@pytest.fixture
def running(client, new_game, ctx):
    game = new_game(game="waters-of-nereus", players=["ann", "bob"])
    project_game(ctx.redis, ctx.store, game["id"])
    return game


@pytest.mark.parametrize("suffix", ORGANISER_PATHS)
def test_organiser_endpoints_need_the_organiser_token(client, running, settings, suffix):
    gid = running["id"]
    path = f"/v1/games/{gid}{suffix}"
    assert client.get(path).status_code == 401
    for token in [running["seats"][0]["token"], "x" * 43, settings.admin_token + "x", settings.admin_token[:-1]]:
        resp = client.get(path, headers=auth(token))
        assert resp.status_code == 403, (token, resp.get_json())
    assert client.get(path, headers=auth(settings.admin_token)).status_code == 200


def test_the_full_feed_needs_the_organiser_token(client, running, settings):
    """Without it the feed of a running game is the redacted one."""
    gid = running["id"]
    public = client.get(f"/v1/games/{gid}/events").get_data(as_text=True)
    full = client.get(f"/v1/games/{gid}/events", headers=auth(settings.admin_token)).get_data(as_text=True)
    assert '"redacted":true' in public.replace(" ", "")
    assert '"redacted":true' not in full.replace(" ", "")


@pytest.mark.parametrize("unset", [None, ""])
def test_without_admin_token_organiser_endpoints_are_disabled(settings, new_game, ctx, unset):
    game = new_game(game="waters-of-nereus", players=["ann", "bob"])
    project_game(ctx.redis, ctx.store, game["id"])
    app = create_app(settings.with_(admin_token=unset), TESTING=True)
    try:
        c = app.test_client()
        gid = game["id"]
        for suffix in ORGANISER_PATHS:
            for headers in [
                {},
                auth(""),
                auth("None"),
                auth("null"),
                auth("undefined"),
                auth(settings.admin_token),
                auth(game["seats"][0]["token"]),
                {"Authorization": "Bearer"},
            ]:
                resp = c.get(f"/v1/games/{gid}{suffix}", headers=headers)
                assert resp.status_code in (401, 403), (suffix, headers, resp.status_code)
                assert resp.status_code == 403 or not headers.get("Authorization", "").strip().endswith(
                    settings.admin_token
                )
            resp = c.get(f"/v1/games/{gid}{suffix}", headers=auth("anything"))
            assert resp.get_json()["error"]["code"] == "organiser_disabled"
        # And nothing sees the admin view: the old operator token is nobody now.
        resp = c.get(f"/v1/games/{gid}", headers=auth(settings.admin_token))
        assert resp.status_code == 403
        feed = c.get(f"/v1/games/{gid}/events").get_data(as_text=True)
        assert '"redacted":true' in feed.replace(" ", "")
    finally:
        app.extensions["quarterdeck"].store.pool.close()
