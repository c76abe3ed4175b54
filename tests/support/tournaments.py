"""A small tournament run in-process (the pages' tests): accounts and the
tournament over HTTP (Flask test client), the rounds advanced by the worker's
round runner and the read model caught up in this thread (what the worker's
jobs do), each game ended by play or by resignation."""

from __future__ import annotations

import random
from typing import Any

from projections import tournaments as tview
from projections.runner import project_game
from support import auth, play
from support.accounts import accept_invitations, organiser, register, unique
from workers import tournaments as tjobs


def work(ctx: Any, tid: str) -> None:
    """What the worker does after a commit: advance the rounds, project the read model."""
    tjobs.runner(ctx).advance(tid)
    tview.catch_up(ctx.redis, ctx.tournament_store, tid)


def _seats(ctx: Any, game_id: str) -> list[str]:
    return ctx.store.read(game_id, upto=1)[0].data["players"]


def resign_all_but_one(client: Any, ctx: Any, game_id: str, keys: dict[str, str]) -> None:
    """End a game: every seat but the last resigns (each with its account's key)."""
    for handle in _seats(ctx, game_id)[:-1]:
        resp = client.post(
            f"/v1/games/{game_id}/intents", json={"intent": {"type": "resign"}}, headers=auth(keys[handle])
        )
        assert resp.status_code == 201, resp.get_json()


def play_out(client: Any, ctx: Any, game_id: str, keys: dict[str, str], seed: int) -> None:
    """Play a game to its end by its rules, each seat with its account's key."""
    created = {"id": game_id, "seats": [{"seat": i, "token": keys[h]} for i, h in enumerate(_seats(ctx, game_id))]}
    play(client, ctx, created, random.Random(seed))


def run_tournament(
    app: Any,
    ctx: Any,
    settings: Any,
    *,
    name: str = "Harbour Cup",
    game: str = "nauticus",
    players: int = 4,
    table_size: int = 2,
    rounds: int = 2,
    played_rounds: int | None = None,
    play_first_table: bool = True,
    seed: int = 5,
    handles: list[str] | None = None,
    organiser_handle: str | None = None,
) -> dict[str, Any]:
    """Create, register, start and play ``played_rounds`` (default: all) rounds of
    a tournament.  In each played round the first table's game is played to its
    end by its rules (``play_first_table``) and every other one ends by
    resignation.  ``handles``: the players' account handles (default: unique
    ones; they must be new to the session's database), and
    ``organiser_handle`` the organiser's (default: a unique one).  Returns
    ``{"id", "organiser", "organiser_key", "keys"}`` (keys: handle -> account key)."""
    client = app.test_client()
    org, okey = organiser(client, settings, organiser_handle)
    keys = dict(register(client, h) for h in (handles or [unique("sk") for _ in range(players)]))
    resp = client.post(
        "/v1/tournaments",
        json={"name": name, "game": game, "table_size": table_size, "rounds": rounds},
        headers=auth(okey),
    )
    assert resp.status_code == 201, resp.get_json()
    tid = resp.get_json()["id"]
    resp = client.post(f"/v1/tournaments/{tid}/players", json={"handles": list(keys)}, headers=auth(okey))
    assert resp.status_code == 200, resp.get_json()
    accept_invitations(client, keys.values())
    resp = client.post(f"/v1/tournaments/{tid}/start", headers=auth(okey))
    assert resp.status_code == 200, resp.get_json()
    work(ctx, tid)
    for n in range(1, (rounds if played_rounds is None else played_rounds) + 1):
        rnd = client.get(f"/v1/tournaments/{tid}/rounds/{n}").get_json()
        for table in rnd["tables"]:
            if play_first_table and table["table"] == 1:
                play_out(client, ctx, table["game_id"], keys, seed + n)
            else:
                resign_all_but_one(client, ctx, table["game_id"], keys)
            project_game(ctx.redis, ctx.store, table["game_id"])
        work(ctx, tid)
    # The games of a round not played yet are projected too (their pages open).
    summary = client.get(f"/v1/tournaments/{tid}").get_json()
    if summary["status"] == "running":
        for table in client.get(f"/v1/tournaments/{tid}/rounds/{summary['round']}").get_json()["tables"]:
            if table["game_id"]:
                project_game(ctx.redis, ctx.store, table["game_id"])
    return {"id": tid, "organiser": org, "organiser_key": okey, "keys": keys}
