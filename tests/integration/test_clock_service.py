"""Clocks, timeouts, resignation and abort through the real command side, event store,
projections and HTTP app (real PostgreSQL and Redis), with an injected time: the command
side's ``now`` is set by the test, so nothing waits for a clock to run out.

Includes the race of an intent and its timeout at the deadline (exactly one wins, the stream
stays dense) and the scheduler's tick over the clocks' index."""

from __future__ import annotations

import threading

import pytest
from support import auth, command_of

from projections import deadlines, keys
from projections.runner import project_game, rebuild_all
from service.audit import checks as audit
from service.domain import clocks, pipeline
from service.domain.errors import Refused
from service.games import registry
from service.service_layer.commands import GameService
from workers import timeouts

T0 = clocks.to_us("2026-05-01T09:00:00.000000Z")


def at(seconds: float) -> str:
    return clocks.to_iso(T0 + round(seconds * 1_000_000))


class Time:
    """An injected clock for a GameService: ``svc.now = clock`` then ``clock.set(seconds)``."""

    def __init__(self, seconds: float = 0.0):
        self.iso = at(seconds)

    def set(self, seconds: float) -> None:
        self.iso = at(seconds)

    def __call__(self) -> str:
        return self.iso


FISCHER_2 = {"type": "fischer", "base_s": 2, "increment_s": 0}


def service(ctx, time: Time, **kw) -> GameService:
    return GameService(ctx.store, ctx.nudge, now=time, **kw)


def first_legal(svc: GameService, gid: str) -> tuple[int, dict]:
    loaded = svc.load(gid)
    with loaded.lock:
        svc.refresh(loaded)
        seat = loaded.engine.to_act(loaded.state)[0]
        return seat, loaded.engine.legal(loaded.state, seat)[0].to_json()


def test_a_seat_that_stops_playing_times_out_at_its_deadline_and_the_game_ends_by_forfeit(ctx):
    """The issue's "done when" on the write side: a 2-player game, recorded at the deadline
    even when written later (a worker that was away), the other player first, audit ok."""
    time = Time(0)
    svc = service(ctx, time)
    created = svc.create_game("nautilus-industries", ["ann", "bob"], {}, clock=FISCHER_2)
    gid = created["id"]
    seat, intent = first_legal(svc, gid)
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    time.set(1.5)
    svc.submit(gid, tokens[seat], command_of(svc, gid, intent), None, None, "h1")  # 0.5 s left for that seat
    other, _ = first_legal(svc, gid)
    assert svc.time_out(gid, at(3.49)) == 0  # other's deadline is 1.5 + 2 = 3.5
    assert ctx.store.version(gid) == created["version"] + 1
    assert svc.time_out(gid, at(60)) == 1  # written late, recorded at the deadline
    events = ctx.store.read(gid)
    timed_out = next(e for e in events if e.type == pipeline.SEAT_TIMED_OUT)
    assert timed_out.data == {"seat": other, "deadline": at(3.5)} and timed_out.meta["received_at"] == at(3.5)
    closing = events[-1]
    assert closing.type == pipeline.GAME_FINISHED
    assert closing.data["result"]["reason"] == "forfeit" and closing.data["result"]["ranking"] == [1 - other, other]
    assert svc.time_out(gid, at(120)) == 0  # fires exactly once
    project_game(ctx.redis, ctx.store, gid)
    report = audit.audit_game(ctx.store, ctx.redis, gid)
    assert report.ok, report.render()
    assert ctx.redis.zscore(keys.DEADLINES, gid) is None  # a finished game leaves the index


def test_an_intent_after_the_deadline_is_refused_even_before_the_timeout_is_written(ctx):
    time = Time(0)
    svc = service(ctx, time)
    created = svc.create_game("nauticus", ["ann", "bob"], {}, clock=FISCHER_2)
    gid = created["id"]
    seat, intent = first_legal(svc, gid)
    token = created["seats"][seat]["token"]
    time.set(2.001)
    with pytest.raises(Refused) as err:
        svc.submit(gid, token, command_of(svc, gid, intent), None, None, "late")
    assert err.value.code == "clock_expired" and err.value.details["deadline"] == at(2)
    assert ctx.store.version(gid) == created["version"]  # nothing written
    assert svc.time_out(gid, at(2.001)) == 1
    with pytest.raises(Refused) as err:
        svc.submit(gid, token, command_of(svc, gid, {"type": "resign"}), None, None, "later")
    assert err.value.code in ("clock_expired", "game_finished")


@pytest.mark.parametrize("round_", range(6))
def test_an_intent_and_its_timeout_race_at_the_deadline_and_exactly_one_wins(ctx, round_):
    """Two command sides (the API's and the worker's), each with its own cache, at exactly the
    deadline: the intent is still in time and the timeout is due; the append's expected version
    lets one of them in, and the other writes nothing."""
    api_time, worker_time = Time(0), Time(2)
    api, worker = service(ctx, api_time), service(ctx, worker_time)
    created = api.create_game("waters-of-nereus", ["ann", "bob"], {}, clock=FISCHER_2)
    gid = created["id"]
    seat, intent = first_legal(api, gid)
    first_legal(worker, gid)  # both caches warm at the same version
    head = ctx.store.version(gid)
    api_time.set(2)
    barrier = threading.Barrier(2)
    outcome: dict[str, object] = {}

    def play() -> None:
        barrier.wait()
        try:
            outcome["intent"] = api.submit(
                gid, created["seats"][seat]["token"], command_of(api, gid, intent), head, None, f"r{round_}"
            )
        except Exception as exc:
            outcome["intent"] = exc

    def flag() -> None:
        barrier.wait()
        outcome["timeout"] = worker.time_out(gid, at(2))

    threads = [threading.Thread(target=play), threading.Thread(target=flag)]
    if round_ % 2:
        threads.reverse()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = ctx.store.read(gid)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    intent_won = isinstance(outcome["intent"], dict)
    timeout_won = outcome["timeout"] == 1
    assert intent_won != timeout_won, outcome
    first_new = events[head]
    if timeout_won:
        assert first_new.type == pipeline.SEAT_TIMED_OUT and first_new.data["deadline"] == at(2)
        assert getattr(outcome["intent"], "code", None) in ("version_conflict", "clock_expired", "game_finished")
    else:
        assert first_new.meta["seat"] == seat and first_new.type != pipeline.SEAT_TIMED_OUT
        assert not any(e.type == pipeline.SEAT_TIMED_OUT for e in events)
    assert audit.redecide(gid, events, ctx.store.secrets(gid)[0]).ok


def test_the_read_model_shows_the_clock_as_of_its_version_and_indexes_the_deadline(ctx):
    time = Time(0)
    svc = service(ctx, time)
    created = svc.create_game("nauticus", ["ann", "bob", "cy"], {}, clock={"type": "deadline", "per_decision_s": 60})
    gid = created["id"]
    project_game(ctx.redis, ctx.store, gid)
    shown = ctx.redis.hget(keys.game(gid), "clock")
    seat, intent = first_legal(svc, gid)
    import json

    clock = json.loads(shown)
    assert clock["type"] == "deadline" and clock["as_of"] == at(0) and clock["deadline"] == {str(seat): at(60)}
    assert clock["remaining_s"] == {"0": 60.0, "1": 60.0, "2": 60.0}
    assert ctx.redis.zscore(keys.DEADLINES, gid) == pytest.approx(deadlines.score(at(60)))
    time.set(10)
    svc.submit(gid, created["seats"][seat]["token"], command_of(svc, gid, intent), None, None, "m1")
    project_game(ctx.redis, ctx.store, gid)
    clock = json.loads(ctx.redis.hget(keys.game(gid), "clock"))
    assert clock["as_of"] == at(10)
    nxt = next(iter(clock["deadline"]))
    assert clock["deadline"][nxt] == at(70)
    # make rebuild gives the same read model and the same index entry.
    before = ctx.redis.hgetall(keys.game(gid)), ctx.redis.zscore(keys.DEADLINES, gid)
    rebuild_all(ctx.redis, ctx.store, game_id=gid)
    assert (ctx.redis.hgetall(keys.game(gid)), ctx.redis.zscore(keys.DEADLINES, gid)) == before


def test_the_schedulers_tick_times_out_due_games_once_and_leaves_the_others(ctx):
    time = Time(0)
    svc = service(ctx, time)
    due = svc.create_game("nauticus", ["ann", "bob"], {}, clock=FISCHER_2)["id"]
    later = svc.create_game("nauticus", ["ann", "bob"], {}, clock={"type": "fischer", "base_s": 600, "increment_s": 0})
    for gid in (due, later["id"]):
        project_game(ctx.redis, ctx.store, gid)
    games = GameService(ctx.store, ctx.nudge, now=Time(30))
    now = deadlines.score(at(30))
    assert timeouts.tick(ctx, games, now=now) == 1
    assert ctx.store.read(due)[-1].type == pipeline.GAME_FINISHED
    assert ctx.store.read(later["id"])[-1].type != pipeline.GAME_FINISHED
    # Claimed for a lease: a second tick right after does not look again...
    assert timeouts.tick(ctx, games, now=now) == 0
    project_game(ctx.redis, ctx.store, due)
    assert ctx.redis.zscore(keys.DEADLINES, due) is None  # ...and the finished game left the index


def test_a_game_the_store_does_not_know_leaves_the_index(ctx):
    ctx.redis.zadd(keys.DEADLINES, {"00000000-0000-4000-8000-00000000dead": 1.0})
    games = GameService(ctx.store, ctx.nudge)
    assert timeouts.tick(ctx, games, now=10.0) == 0
    assert ctx.redis.zscore(keys.DEADLINES, "00000000-0000-4000-8000-00000000dead") is None


# -- over HTTP ---------------------------------------------------------------------------------


def test_create_with_a_clock_get_shows_it_and_a_bad_clock_is_refused(client, run_worker):
    body = {
        "game": "nauticus",
        "players": ["ann", "bob"],
        "clock": {"type": "fischer", "base_s": 300, "increment_s": 5},
    }
    resp = client.post("/v1/games", json=body)
    assert resp.status_code == 201, resp.get_json()
    gid = resp.get_json()["id"]
    run_worker()
    game = client.get(f"/v1/games/{gid}").get_json()
    assert game["clock"]["type"] == "fischer" and game["clock"]["remaining_s"] == {"0": 300.0, "1": 300.0}
    assert set(game["clock"]["deadline"]) == {str(s) for s in game["to_act"]}
    for bad in ({"type": "fischer", "base_s": 300}, {"type": "deadline", "per_decision_s": 0.5}, {"type": "x"}):
        resp = client.post("/v1/games", json=body | {"clock": bad})
        assert resp.status_code == 422 and resp.get_json()["error"]["code"] == "validation_error", bad


def test_a_game_without_a_clock_gets_the_default_deadline(client, run_worker, app):
    resp = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"], "clock": None})
    assert resp.status_code == 201, resp.get_json()
    gid = resp.get_json()["id"]
    run_worker()
    answer = client.get(f"/v1/games/{gid}").get_json()
    clock = answer["clock"]
    default = app.extensions["quarterdeck"].settings.default_deadline_s
    assert clock["type"] == "deadline" and clock["per_decision_s"] == default
    resp = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"], "clock": {"type": "none"}})
    run_worker()
    assert client.get(f"/v1/games/{resp.get_json()['id']}").get_json()["clock"] is None


def test_resign_over_http_ends_a_two_player_game_and_is_in_the_stream(client, new_game, run_worker):
    created = new_game("waters-of-nereus", ["ann", "bob"])
    gid = created["id"]
    resp = client.post(
        f"/v1/games/{gid}/intents", json={"intent": {"type": "resign"}}, headers=auth(created["seats"][1]["token"])
    )
    assert resp.status_code == 201, resp.get_json()
    types = [e["type"] for e in resp.get_json()["events"]]
    assert types[:2] == ["SeatResigned", "SeatForfeited"] and types[-1] == "GameFinished"
    run_worker()
    game = client.get(f"/v1/games/{gid}").get_json()
    assert game["status"] == "finished" and game["to_act"] == []
    assert game["result"]["reason"] == "forfeit" and game["result"]["ranking"] == [0, 1]
    assert game["result"]["forfeited"] == [1]
    bad = client.post(
        f"/v1/games/{gid}/intents",
        json={"intent": {"type": "resign", "now": True}},
        headers=auth(created["seats"][0]["token"]),
    )
    assert bad.status_code == 422
    # /legal never lists resign (a bot picking at random would resign): it is always allowed.
    assert client.get(f"/v1/games/{gid}/audit").get_json()["ok"] is True


def test_a_client_cannot_post_the_platforms_own_intents(client, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    token = created["seats"][0]["token"]
    for intent in ({"type": "timeout"}, {"type": "abort", "reason": "x", "by": "me"}):
        resp = client.post(f"/v1/games/{created['id']}/intents", json={"intent": intent}, headers=auth(token))
        assert resp.status_code == 422 and resp.get_json()["error"]["code"] == "invalid_intent", intent


def test_resign_is_not_listed_by_legal(client, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    for seat in created["seats"]:
        intents = client.get(f"/v1/games/{created['id']}/legal", headers=auth(seat["token"])).get_json()["intents"]
        assert {"type": "resign"} not in intents


def test_abort_by_the_operator_ends_the_game_unrated(client, new_game, run_worker, settings):
    created = new_game("nautilus-industries", ["ann", "bob"])
    gid = created["id"]
    seat_token = created["seats"][0]["token"]
    assert client.post(f"/v1/games/{gid}/abort", json={}).status_code == 401
    assert client.post(f"/v1/games/{gid}/abort", json={}, headers=auth(seat_token)).status_code == 403
    resp = client.post(f"/v1/games/{gid}/abort", json={"reason": "a bot loops"}, headers=auth(settings.admin_token))
    assert resp.status_code == 200, resp.get_json()
    assert [e["type"] for e in resp.get_json()["events"]] == ["GameAborted", "GameFinished"]
    assert resp.get_json()["events"][0]["data"] == {"reason": "a bot loops", "by": "operator"}
    again = client.post(f"/v1/games/{gid}/abort", json={}, headers=auth(settings.admin_token))
    assert again.status_code == 422 and again.get_json()["error"]["code"] == "game_finished"
    run_worker()
    game = client.get(f"/v1/games/{gid}").get_json()
    assert game["status"] == "finished" and game["result"]["reason"] == "aborted" and game["result"]["ranking"] == []
    assert client.get(f"/v1/games/{gid}/audit").get_json()["ok"] is True
    missing = client.post(
        "/v1/games/00000000-0000-4000-8000-000000000404/abort", json={}, headers=auth(settings.admin_token)
    )
    assert missing.status_code == 404


def test_time_travel_shows_the_clock_and_the_platforms_result(client, ctx, settings):
    time = Time(0)
    svc = service(ctx, time)
    created = svc.create_game("nauticus", ["ann", "bob"], {}, clock=FISCHER_2)
    gid = created["id"]
    svc.time_out(gid, at(5))
    head = ctx.store.version(gid)
    state = client.get(f"/v1/games/{gid}/state", query_string={"version": head}).get_json()
    assert state["result"]["reason"] == "forfeit" and state["clock"]["timed_out"] == [state["result"]["ranking"][1]]
    assert registry.get("nauticus") is not None
