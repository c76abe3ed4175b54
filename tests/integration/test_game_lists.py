"""``GET /v1/games?game=&status=&player=`` from the Redis index: filters alone
and combined, paging, newest first, a game moving from active to finished,
a rebuild giving the same lists, and a guest's name listing nothing."""

from __future__ import annotations

import random
import re
import uuid

from support import command_of
from support.leaderboards import fast_forward, handles, quiet_service

from projections import keys
from projections.game_lists import index_game as _index_game
from projections.runner import project_game, rebuild_game
from service.domain.identity import ACCOUNT, Account, Principal


def _ids(client, query: str) -> list[str]:
    resp = client.get(f"/v1/games?{query}")
    assert resp.status_code == 200, resp.get_json()
    return [g["id"] for g in resp.get_json()["games"]]


def _table(ctx):
    """Five games of three players, created oldest to newest, projected."""
    svc = quiet_service(ctx.store)
    a, b, c = handles("ann", "bob", "cy")
    plan = [
        ("nauticus", [a, b]),
        ("nautilus-industries", [a, c]),
        ("nauticus", [b, c]),
        ("waters-of-nereus", [a, b]),
        ("nauticus", [a, c]),
    ]
    # Seats of accounts: a name in a casual game is a guest's and lists the game under no one.
    created = [svc.create_game(game, players, {}, accounts=[True] * len(players)) for game, players in plan]
    for g in created:
        project_game(ctx.redis, ctx.store, g["id"])
    return svc, (a, b, c), created


def test_filters_alone_and_combined_newest_first(ctx, client):
    _, (a, b, c), g = _table(ctx)
    ids = [x["id"] for x in g]
    assert _ids(client, f"player={a}") == [ids[4], ids[3], ids[1], ids[0]]
    assert _ids(client, f"player={b}") == [ids[3], ids[2], ids[0]]
    assert _ids(client, f"player={a}&game=nauticus") == [ids[4], ids[0]]
    assert _ids(client, f"player={c}&game=nauticus&status=active") == [ids[4], ids[2]]
    assert _ids(client, f"player={b}&game=nautilus-industries") == []
    everything = _ids(client, "limit=500")
    assert [i for i in everything if i in ids] == ids[::-1], "newest first overall"
    body = client.get(f"/v1/games?player={a}&game=nauticus").get_json()
    assert body["total"] == 2 and body["limit"] == 50 and body["offset"] == 0
    first = body["games"][0]
    assert first["players"] == [a, c] and first["status"] == "active" and first["result"] is None
    assert first["game"] == "nauticus" and first["version"] >= 1 and first["created_at"]


def test_paging_walks_the_list_without_gaps(ctx, client):
    _, (a, _, _), g = _table(ctx)
    ids = [x["id"] for x in g]
    expected = [ids[4], ids[3], ids[1], ids[0]]
    pages = [client.get(f"/v1/games?player={a}&limit=3&offset={o}").get_json() for o in (0, 3, 6)]
    assert [x["id"] for x in pages[0]["games"]] == expected[:3]
    assert [x["id"] for x in pages[1]["games"]] == expected[3:]
    assert pages[2]["games"] == []
    assert {p["total"] for p in pages} == {4}
    combined = [client.get(f"/v1/games?player={a}&game=nauticus&limit=1&offset={o}").get_json() for o in (0, 1)]
    assert [p["games"][0]["id"] for p in combined] == [ids[4], ids[0]]
    assert {p["total"] for p in combined} == {2}
    assert client.get("/v1/games?limit=0").status_code == 422
    assert client.get("/v1/games?status=paused").status_code == 422
    assert client.get("/v1/games?game=chess").status_code == 422


def test_a_finished_game_moves_from_active_to_finished(ctx, client):
    svc, (a, b, _), g = _table(ctx)
    first = g[0]
    last = fast_forward(svc, first, random.Random(5))
    assert _ids(client, f"player={a}&status=finished") == []
    # The seat's account acts for it (the test's handles are not registered: the principal is made here).
    account = Principal(ACCOUNT, Account(str(uuid.uuid4()), last["player"], "player"))
    svc.submit(
        first["id"], None, command_of(svc, first["id"], last["intent"]), last["version"], None, "", principal=account
    )
    project_game(ctx.redis, ctx.store, first["id"])
    assert _ids(client, f"player={a}&status=finished") == [first["id"]]
    assert first["id"] not in _ids(client, f"player={a}&status=active")
    assert _ids(client, f"player={b}&game=nauticus&status=finished") == [first["id"]]
    assert first["id"] not in _ids(client, "status=active&limit=500")
    listed = client.get(f"/v1/games?player={a}&status=finished").get_json()["games"][0]
    assert listed["status"] == "finished" and listed["result"]["ranks"]
    # The index is a read model like any other: a rebuild gives the same lists.
    queries = [f"player={a}", f"player={a}&status=finished", f"player={b}&game=nauticus", "status=active&limit=500"]
    before = {q: client.get(f"/v1/games?{q}").data for q in queries}
    ids = [x["id"] for x in g]
    for key in ctx.redis.scan_iter(match="games:*"):
        if ctx.redis.type(key) == b"zset":
            ctx.redis.zrem(key, *ids)
    assert _ids(client, f"player={a}") == []
    for gid in ids:
        rebuild_game(ctx.redis, ctx.store, gid)
    assert {q: client.get(f"/v1/games?{q}").data for q in queries} == before


def test_games_created_in_the_same_millisecond_list_newest_first(ctx):
    """Scores are microseconds: the millisecond alone would list these two by id."""
    (a,) = handles("ann")
    base = {"game": "nauticus", "players": [a], "accounts": [True], "created_ms": 1_700_000_000_123}
    older = base | {"id": "ffffffff-0000-4000-8000-000000000000", "created_at": "2023-11-14T22:13:20.123100Z"}
    newer = base | {"id": "00000000-0000-4000-8000-000000000000", "created_at": "2023-11-14T22:13:20.123900Z"}
    with ctx.redis.pipeline() as pipe:
        for info in (older, newer):
            _index_game(pipe, info, {"status": "active"}, False)
        pipe.execute()
    listed = [x.decode() for x in ctx.redis.zrevrange(keys.games_by("player", a), 0, -1)]
    assert listed == [newer["id"], older["id"]]
    for info in (older, newer):
        for key in (keys.GAMES_ALL, keys.games_by("game", "nauticus"), keys.games_by("status", "active")):
            ctx.redis.zrem(key, info["id"])
    ctx.redis.delete(keys.games_by("player", a))


def test_a_name_in_a_casual_game_lists_it_under_no_one(ctx, client):
    """A casual game by names: anyone may type anyone's handle, so the game is listed under
    neither name, and says which seats are guests."""
    svc = quiet_service(ctx.store)
    a, b = handles("ann", "bob")
    mixed = svc.create_game("nauticus", [a, b], {}, accounts=[True, False])
    guests = svc.create_game("nauticus", [a, b], {})
    for g in (mixed, guests):
        project_game(ctx.redis, ctx.store, g["id"])
    assert _ids(client, f"player={a}") == [mixed["id"]]
    assert _ids(client, f"player={b}") == []
    listed = {g["id"]: g for g in client.get("/v1/games?limit=500").get_json()["games"]}
    assert listed[mixed["id"]]["guests"] == [1] and listed[guests["id"]]["guests"] == [0, 1]
    # The pages: the account's page lists only its own seat's game; a guest's name is not a link.
    page = client.get(f"/players/{a}").get_data(as_text=True)
    assert mixed["id"] in page and guests["id"] not in page
    assert client.get(f"/players/{b}").status_code == 404
    row = re.search(rf'<a href="/games/{guests["id"]}">.*?</tr>', client.get("/games").get_data(as_text=True), re.S)
    assert row and f'href="/players/{a}"' not in row.group(0) and row.group(0).count("(guest)") == 2
