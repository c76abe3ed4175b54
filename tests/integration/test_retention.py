"""Redis retention of finished games (``QD_FINISHED_RETENTION_S``,
projections/runner.py): a finished game's read model gets a time to live in
the MULTI that writes its finish, leaves Redis with its checkpoint, and comes
back through the normal catch-up, byte for byte, when it is read again.  The
game lists keep showing it meanwhile."""

from __future__ import annotations

import time

from support import auth, play_fast, project_job, projecting
from support.accounts import unique

from projections import keys
from projections.runner import rebuild_game
from service.bootstrap import bootstrap
from workers import context

RETENTION = 2


def _bodies(client, gid: str, game: dict, settings) -> dict[str, object]:
    """Everything a reader sees of the game: each seat's board and legal list, the public and organiser's."""
    out: dict[str, object] = {"public": client.get(f"/v1/games/{gid}").get_json()}
    out["admin"] = client.get(f"/v1/games/{gid}", headers=auth(settings.admin_token)).get_json()
    for s in game["seats"]:
        out[f"seat{s['seat']}"] = client.get(f"/v1/games/{gid}", headers=auth(s["token"])).get_json()
        out[f"legal{s['seat']}"] = client.get(f"/v1/games/{gid}/legal", headers=auth(s["token"])).get_json()
    return out


def _listed(client, query: str, gid: str) -> dict:
    """The game's entry in ``GET /v1/games?<query>`` (its names are guests': no player lists it)."""
    found = [g for g in client.get(f"/v1/games?{query}&limit=500").get_json()["games"] if g["id"] == gid]
    assert len(found) == 1, found
    return found[0]


def test_a_finished_games_read_model_expires_and_comes_back_the_same(client, app, ctx, settings):
    short = bootstrap(settings.with_(finished_retention_s=RETENTION))
    context.set_context(short)
    try:
        players = [unique("ret"), unique("ret")]
        game = client.post("/v1/games", json={"game": "nauticus", "players": players, "options": {}}).get_json()
        gid, key = game["id"], keys.game(game["id"])
        play_fast(app, game, seed=4, stop_after=10, intent_prefix="ret-")
        project_job(short, gid)
        assert short.redis.ttl(key) == -1  # a running game never expires
        resp = client.post(
            f"/v1/games/{gid}/intents", json={"intent": {"type": "resign"}}, headers=auth(game["seats"][0]["token"])
        )
        assert resp.status_code == 201, resp.get_json()
        project_job(short, gid)
        assert 0 < short.redis.ttl(key) <= RETENTION  # set by the MULTI that wrote the finish
        stored = short.redis.hgetall(key)
        assert stored[b"status"] == b"finished"
        seen = _bodies(client, gid, game, settings)
        listed = _listed(client, "status=finished", gid)
        assert listed["status"] == "finished" and listed["guests"] == [0, 1]

        deadline = time.monotonic() + RETENTION + 3
        while short.redis.exists(key) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not short.redis.exists(key)  # views, legal lists and checkpoint: gone together
        # The lists still show it, made from its stream as from its hash, without bringing it back.
        assert _listed(client, "status=finished", gid) == listed
        assert _listed(client, "game=nauticus", gid) == listed
        assert not short.redis.exists(key)

        # Read again: the missing read model asks the worker, which folds the stream again.
        with projecting(short):
            assert _bodies(client, gid, game, settings) == seen
        assert short.redis.hgetall(key) == stored
        assert 0 < short.redis.ttl(key) <= RETENTION  # and it leaves again

        # A rebuild gives the same bytes, with the same time to live.
        rebuild_game(short.redis, short.store, gid, RETENTION)
        assert short.redis.hgetall(key) == stored and 0 < short.redis.ttl(key) <= RETENTION
    finally:
        context.set_context(ctx)
        short.close()
