"""docs/API.md "Analysis" against real PostgreSQL and Redis: a running game is refused, a finished one is
enqueued once (202 with Retry-After), computed by the analysis worker's job and then served (200), and what
a burst of requests can make the service spend is bounded by the daily quota and the queue's cap."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from rq import Queue
from support import play_fast

from projections.runner import project_game
from service.bootstrap import analyses
from service.http.app import create_app
from workers.rq_worker import ProjectionWorker

GAME = "nauticus"


@pytest.fixture(scope="module")
def analysis_app(settings) -> Iterator[object]:
    """An app with small bounds: two new analyses a day per address, four jobs waiting at most."""
    made = create_app(
        settings.with_(analysis_per_day_address=2, analysis_per_day=3, analysis_queue_max=4), TESTING=True
    )
    yield made
    made.extensions["quarterdeck"].store.pool.close()


@pytest.fixture
def queue(ctx) -> Iterator[Queue]:
    q = Queue(ctx.settings.analysis_queue, connection=ctx.queue_redis)
    q.empty()
    yield q
    q.empty()


def finished_game(app, ctx, seed: int) -> str:
    created = app.test_client().post("/v1/games", json={"game": GAME, "players": ["ann", "bob"]}).get_json()
    play_fast(app, created, seed=seed, intent_prefix=f"analysis-{seed}-")
    project_game(ctx.redis, ctx.store, created["id"])
    return created["id"]


def run_analysis_jobs(ctx, queue: Queue) -> None:
    """The analysis worker's jobs, now, in-process, with a small search budget (the bound, not strength,
    is tested here)."""
    kept = ctx.settings
    ctx.settings = kept.with_(analysis_search_cpu_s=0.002)
    try:
        ProjectionWorker([queue], connection=ctx.queue_redis).work(burst=True, logging_level="WARNING")
    finally:
        ctx.settings = kept


def test_a_running_game_is_refused_and_enqueues_nothing(analysis_app, ctx, queue):
    client = analysis_app.test_client()
    created = client.post("/v1/games", json={"game": GAME, "players": ["cy", "dee"]}).get_json()
    play_fast(analysis_app, created, seed=3, stop_after=5, intent_prefix="analysis-running-")
    resp = client.get(f"/v1/games/{created['id']}/analysis")
    assert resp.status_code == 409, resp.get_json()
    assert resp.get_json()["error"]["code"] == "game_running"
    assert queue.count == 0
    assert not ctx.redis.exists(analyses(ctx).pending_key(created["id"]))


def test_a_finished_game_is_computed_once_then_served(analysis_app, ctx, queue):
    client = analysis_app.test_client()
    gid = finished_game(analysis_app, ctx, seed=11)
    headers = {"REMOTE_ADDR": "198.51.100.7"}
    first = client.get(f"/v1/games/{gid}/analysis", environ_base=headers)
    assert first.status_code == 202, first.get_json()
    assert int(first.headers["Retry-After"]) >= 1
    assert first.get_json() == {"status": "computing", "retry_after_seconds": int(first.headers["Retry-After"])}
    again = client.get(f"/v1/games/{gid}/analysis", environ_base=headers)
    assert again.status_code == 202 and queue.count == 1  # asking again enqueues nothing
    run_analysis_jobs(ctx, queue)
    done = client.get(f"/v1/games/{gid}/analysis")
    assert done.status_code == 200, done.get_json()
    body = done.get_json()
    events = ctx.store.read(gid, after=0)
    assert body["game_id"] == gid and body["game"] == GAME and body["level"] == 3
    assert [e["seq"] for e in body["events"]] == [e.seq for e in events]
    assert all(len(e["values"]) == 2 for e in body["events"])
    assert body["decisions"] and {a["seat"] for a in body["agreement"]} == {0, 1}
    assert sum(a["decisions"] for a in body["agreement"]) == len(body["decisions"])
    own = {(e.seq, e.meta["seat"]) for e in events if e.meta.get("intent") and e.meta.get("seat") is not None}
    assert {(d["seq"], d["seat"]) for d in body["decisions"]} <= own
    for mistake in body["mistakes"]:
        assert mistake["loss"] >= 1.0 and mistake["preferred_text"]
    assert queue.count == 0 and not ctx.redis.exists(analyses(ctx).pending_key(gid))


def test_a_burst_of_requests_is_bounded_by_the_quota_and_the_queue(analysis_app, ctx, queue):
    """Twelve threads ask for the analyses of six finished games from one address: two jobs are enqueued
    (the address's day), the rest are refused with Retry-After, and a refused request spends nothing: the
    enqueued games still answer 202 and the others stay refused."""
    games = [finished_game(analysis_app, ctx, seed=100 + i) for i in range(6)]
    address = {"REMOTE_ADDR": "203.0.113.9"}
    answers: list[tuple[str, int, str | None]] = []
    lock = threading.Lock()

    def ask(gid: str) -> None:
        resp = analysis_app.test_client().get(f"/v1/games/{gid}/analysis", environ_base=address)
        with lock:
            answers.append((gid, resp.status_code, resp.headers.get("Retry-After")))

    threads = [threading.Thread(target=ask, args=(g,)) for g in games * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert queue.count == 2
    accepted = {gid for gid, status, _ in answers if status == 202}
    assert len(accepted) == 2
    refused = [(gid, retry) for gid, status, retry in answers if status == 429]
    assert len(refused) == 12 - sum(1 for _, status, _ in answers if status == 202)
    assert all(retry is not None and int(retry) >= 1 for _, retry in refused)
    for gid in games:
        resp = analysis_app.test_client().get(f"/v1/games/{gid}/analysis", environ_base=address)
        assert resp.status_code == (202 if gid in accepted else 429)
    assert queue.count == 2
    # Another address with an account-free quota of its own meets the queue's cap (four) before its quota.
    others = [finished_game(analysis_app, ctx, seed=200 + i) for i in range(3)]
    statuses = []
    for i, gid in enumerate([g for g in games if g not in accepted] + others):
        resp = analysis_app.test_client().get(f"/v1/games/{gid}/analysis", environ_base={"REMOTE_ADDR": f"192.0.2.{i}"})
        statuses.append(resp.status_code)
        if resp.status_code == 503:
            assert resp.get_json()["error"]["code"] == "busy" and resp.headers["Retry-After"]
    assert queue.count == 4 and statuses.count(202) == 2 and 503 in statuses


def test_a_finished_tournaments_audit_gives_each_players_agreement(app, ctx, settings, queue):
    """The fair-play signal: the first audit asks for its games' analyses (counted like any request), a
    later one sums each player's decisions and matches over the games analysed."""
    from support.tournaments import run_tournament

    ran = run_tournament(app, ctx, settings, players=2, rounds=1, seed=21)
    client = app.test_client()
    first = client.get(f"/v1/tournaments/{ran['id']}/audit", environ_base={"REMOTE_ADDR": "198.51.100.50"})
    assert first.status_code == 200
    report = first.get_json()
    assert report["status"] == "finished" and report["ok"], report
    fair = report["fair_play"]
    assert "never a verdict" in fair["note"]
    assert fair["games_analysed"] == 0 and len(fair["games_pending"]) == 1 and queue.count == 1
    run_analysis_jobs(ctx, queue)
    fair = client.get(f"/v1/tournaments/{ran['id']}/audit").get_json()["fair_play"]
    assert fair["games_analysed"] == 1 and fair["games_pending"] == []
    assert {p["player"] for p in fair["players"]} == set(ran["keys"])
    gid = client.get(f"/v1/tournaments/{ran['id']}/rounds/1").get_json()["tables"][0]["game_id"]
    kept = analyses(ctx).kept(gid, 1)
    assert kept is not None
    seats = ctx.store.read(gid, upto=1)[0].data["players"]
    for p in fair["players"]:
        own = kept["agreement"][seats.index(p["player"])]
        assert (p["decisions"], p["matched"], p["games"]) == (own["decisions"], own["matched"], 1)
        assert p["rate"] == (round(own["matched"] / own["decisions"], 3) if own["decisions"] else None)
