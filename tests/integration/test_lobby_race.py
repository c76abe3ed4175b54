"""The lobby against real PostgreSQL (docs/API.md "Tables"): open, list, join,
leave; the last join starts the game with a seat order drawn from its seed
(and the audit re-derives it), in its transaction (both or neither), and its
projection is nudged once that commits; players racing for the last seats
never over-seat a table nor start it twice."""

from __future__ import annotations

import dataclasses
import threading
import uuid

import psycopg
from support import auth
from support.accounts import organiser, register, unique

from projections.runner import project_game
from service.audit import checks
from service.domain import pipeline


def open_table(client, key: str, **body) -> dict:
    resp = client.post("/v1/tables", json={"game": "nauticus", "seats": 2} | body, headers=auth(key))
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def games_of_table(ctx, table_id: str) -> list[str]:
    with ctx.store.pool.connection() as conn:
        rows = conn.execute(
            "SELECT game_id::text FROM events WHERE seq = 1 AND data->>'table' = %s", (table_id,)
        ).fetchall()
    return [r[0] for r in rows]


def test_open_list_join_start_and_the_audit_rederives_the_seats(client, ctx):
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    cy, cy_key = register(client, unique("cy"))
    table = open_table(client, ann_key, seats=3, rated=True)
    assert table["players"] == [ann] and table["status"] == "open" and table["game_id"] is None
    assert table["created_by"] == ann and table["rated"] is True
    listed = client.get("/v1/tables?game=nauticus").get_json()["tables"]
    assert table["id"] in [t["id"] for t in listed]
    joined = client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key))
    assert joined.status_code == 200 and joined.get_json()["players"] == [ann, bob]
    started = client.post(f"/v1/tables/{table['id']}/join", headers=auth(cy_key)).get_json()
    assert started["status"] == "started" and started["game_id"]
    assert table["id"] not in [t["id"] for t in client.get("/v1/tables").get_json()["tables"]]
    assert client.get(f"/v1/tables/{table['id']}").get_json()["game_id"] == started["game_id"]
    gid = started["game_id"]
    assert games_of_table(ctx, table["id"]) == [gid]

    opening = ctx.store.read(gid, upto=1)[0].data
    assert opening["joined"] == [ann, bob, cy] and opening["rated"] is True
    assert opening["accounts"] == [True, True, True] and opening["table"] == table["id"]
    assert "created_by" not in opening  # a player's table: no organiser
    assert sorted(opening["players"]) == sorted([ann, bob, cy])
    seed, _ = ctx.store.secrets(gid)
    assert opening["players"] == pipeline.draw_seats(seed, [ann, bob, cy])

    # Each player's key is its drawn seat.
    project_game(ctx.redis, ctx.store, gid)
    for handle, key in [(ann, ann_key), (bob, bob_key), (cy, cy_key)]:
        game = client.get(f"/v1/games/{gid}", headers=auth(key)).get_json()
        assert game["players"][game["seat"]] == handle and game["rated"] is True

    # The audit re-draws the seats from the seed and the join order.
    report = checks.audit_game(ctx.store, ctx.redis, gid, projection=False)
    assert report.ok, report.render()
    assert report.checks["redecide"].details["seating"]["drawn"] == opening["players"]
    # A stream whose seat order is not the drawn one fails it.
    events = ctx.store.read(gid)
    forged = dict(opening, players=opening["players"][::-1])
    failed = checks.redecide(gid, [dataclasses.replace(events[0], data=forged), *events[1:]], seed, "stored")
    assert not failed.ok and failed.details["first_divergence"]["seq"] == 1


def test_join_and_leave_errors(client, ctx, settings):
    ann, ann_key = register(client)
    _, bob_key = register(client, unique("bob"))
    _, cup_key = organiser(client, settings)
    table = open_table(client, ann_key, seats=3)
    tid = table["id"]
    assert client.post(f"/v1/tables/{tid}/join", headers=auth(ann_key)).get_json()["error"]["code"] == (
        "already_seated"
    )
    resp = client.post(f"/v1/tables/{tid}/join", headers=auth(cup_key))
    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "player_key_required"
    assert client.post(f"/v1/tables/{tid}/join").status_code == 401
    assert client.post(f"/v1/tables/{uuid.uuid4()}/join", headers=auth(bob_key)).status_code == 404
    assert client.post(f"/v1/tables/{tid}/leave", headers=auth(bob_key)).get_json()["error"]["code"] == ("not_at_table")
    # Bad tables are refused at once, not at their last join.
    for body in [{"seats": 7}, {"seats": 1}, {"options": {"nonsense": 1}}, {"game": "chess"}, {"join": False}]:
        resp = client.post("/v1/tables", json={"game": "nauticus", "seats": 2} | body, headers=auth(ann_key))
        assert resp.status_code == 422, (body, resp.get_json())
    # An organiser opens tables for others and does not sit.
    taken = client.post("/v1/tables", json={"game": "nauticus", "seats": 2, "join": True}, headers=auth(cup_key))
    assert taken.status_code == 422 and taken.get_json()["error"]["code"] == "invalid_join"
    cup_table = open_table(client, cup_key)
    assert cup_table["players"] == []
    # The last player to leave a player's table closes it.
    left = client.post(f"/v1/tables/{tid}/leave", headers=auth(ann_key)).get_json()
    assert left["status"] == "closed" and left["players"] == []
    assert client.post(f"/v1/tables/{tid}/join", headers=auth(bob_key)).get_json()["error"]["code"] == "table_closed"


def test_the_open_tables_of_an_account_are_capped(client, ctx, settings):
    _, key = register(client)
    for _ in range(settings.max_open_tables):
        open_table(client, key)
    resp = client.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(key))
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "too_many_tables"


def test_an_organisers_table_starts_a_game_it_organises(client, ctx, settings):
    cup, cup_key = organiser(client, settings)
    table = open_table(client, cup_key, seats=2, rated=True)
    keys = [register(client, unique(n))[1] for n in ("ann", "bob")]
    for key in keys:
        last = client.post(f"/v1/tables/{table['id']}/join", headers=auth(key)).get_json()
    assert last["status"] == "started"
    assert client.post(f"/v1/tables/{table['id']}/leave", headers=auth(keys[0])).get_json()["error"]["code"] == (
        "table_started"
    )
    opening = ctx.store.read(last["game_id"], upto=1)[0].data
    assert opening["created_by"] == cup and opening["rated"] is True


def test_the_join_that_fills_a_table_nudges_its_game_once_after_the_commit(app, client, settings, monkeypatch):
    told: list[tuple[str, tuple | None]] = []
    with psycopg.connect(settings.database_url, autocommit=True) as other:

        def nudge(game_id: str) -> None:
            # What another connection sees of the table when the nudge comes.
            row = other.execute("SELECT status, game_id::text FROM lobby_tables WHERE game_id = %s", (game_id,))
            told.append((game_id, row.fetchone()))

        monkeypatch.setattr(app.extensions["quarterdeck"].games, "nudge", nudge)
        _, ann_key = register(client)
        _, bob_key = register(client, unique("bob"))
        table = open_table(client, ann_key, seats=2)
        assert told == []
        started = client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key)).get_json()
    assert started["status"] == "started"
    assert told == [(started["game_id"], ("started", started["game_id"]))]


def test_a_last_join_that_fails_after_creating_the_game_records_neither(app, client, ctx, monkeypatch):
    """The table's last seat, its game and the table marked started are one
    transaction: a failure at the last step leaves the table open with its seat
    free, no game, and nothing nudged; the next join starts it."""
    told: list[str] = []
    services = app.extensions["quarterdeck"]
    monkeypatch.setattr(services.games, "nudge", told.append)
    ann, ann_key = register(client)
    bob, bob_key = register(client, unique("bob"))
    table = open_table(client, ann_key, seats=2)

    def fails(*_args) -> None:
        raise RuntimeError("the server fails as the table is marked started")

    with monkeypatch.context() as patched:
        patched.setattr(services.lobby.store, "started", fails)
        assert client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key)).status_code == 500
    assert told == [] and games_of_table(ctx, table["id"]) == []
    after = client.get(f"/v1/tables/{table['id']}").get_json()
    assert after["status"] == "open" and after["players"] == [ann] and after["game_id"] is None

    started = client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key)).get_json()
    assert started["status"] == "started" and started["players"] == [ann, bob]
    assert told == [started["game_id"]] and games_of_table(ctx, table["id"]) == [started["game_id"]]


def test_eight_players_racing_for_two_seats_never_overseat_nor_start_twice(app, ctx, monkeypatch):
    """100 rounds: one player opens a 3-seat table, then 8 players join at once
    for its 2 free seats.  Exactly 2 joins win (the second starts the game),
    6 get 409 table_full, the table holds 3, and one game has its id and is
    nudged once."""
    told: list[str] = []
    monkeypatch.setattr(app.extensions["quarterdeck"].games, "nudge", told.append)
    client = app.test_client()
    opener = register(client)[1]
    racers = [register(client, unique(f"r{i}"))[1] for i in range(8)]
    for round_ in range(100):
        table = open_table(client, opener, seats=3)
        tid = table["id"]
        answers = _race(app, tid, racers)
        statuses = sorted(s for s, _ in answers)
        assert statuses == [200, 200] + [409] * 6, (round_, answers)
        assert {a["error"]["code"] for s, a in answers if s == 409} == {"table_full"}
        started = [a for s, a in answers if s == 200 and a["status"] == "started"]
        assert len(started) == 1, (round_, answers)
        final = client.get(f"/v1/tables/{tid}").get_json()
        assert final["status"] == "started" and len(final["players"]) == 3
        assert games_of_table(ctx, tid) == [final["game_id"]] == [started[0]["game_id"]]
        assert told == [final["game_id"]], (round_, told)
        told.clear()
        with ctx.store.pool.connection() as conn:
            seated = conn.execute("SELECT count(*) FROM lobby_seats WHERE table_id = %s", (tid,)).fetchone()[0]
        assert seated == 3


def _race(app, tid: str, keys: list[str]) -> list[tuple[int, dict]]:
    """Every key joins ``tid`` at the same moment, each from its own client."""
    barrier = threading.Barrier(len(keys))
    answers: list[tuple[int, dict]] = []
    lock = threading.Lock()

    def join(key: str) -> None:
        local = app.test_client()
        barrier.wait()
        resp = local.post(f"/v1/tables/{tid}/join", headers=auth(key))
        with lock:
            answers.append((resp.status_code, resp.get_json()))

    threads = [threading.Thread(target=join, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return answers
