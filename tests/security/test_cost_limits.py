"""What one client can make the service spend is bounded (issue: "Cost limits"):

* a game cannot grow without end: at its length cap (recorded in its
  ``GameCreated``) it is aborted, unrated, in its stream, and its audit
  re-decides the abort;
* the events feed is paged (``limit``, with a maximum) and streamed from
  PostgreSQL in batches, in memory that does not grow with the game;
* a finished game's audit is computed once and kept; the operator re-checks
  on demand;
* expensive work (audits, time travel, exports) runs a bounded number at a
  time per process: beyond, ``503 busy`` after a bounded wait.
"""

from __future__ import annotations

import json
import random
import threading
import time
import tracemalloc
import uuid

import pytest
from support import auth, wait_for_feed_horizon

from projections import leaderboards as lb
from projections.runner import project_game
from service.audit import checks
from service.domain.pipeline import GAME_ABORTED, GAME_FINISHED, LENGTH_CAP, seal
from service.domain.records import NewEvent
from service.games.base import clone_state
from service.games.rng import Rng
from service.http.app import create_app
from service.http.audit import FEED_BATCH
from service.service_layer.commands import GameService, now_iso

CAP = 80


@pytest.fixture(scope="module")
def capped(settings):
    app = create_app(
        settings.with_(max_game_events=CAP, feed_page_default=100, feed_page_max=3000, expensive_wait_seconds=0.3),
        TESTING=True,
    )
    yield app
    app.extensions["quarterdeck"].store.pool.close()


def play_random(app, created: dict, seed: int, limit: int = 5000) -> int:
    """Random legal intents through the game service until the game ends."""
    games = app.extensions["quarterdeck"].games
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    chooser = random.Random(seed)
    for n in range(limit):
        loaded = games.load(created["id"])
        with loaded.lock:
            games.refresh(loaded)
            if loaded.finished:
                return n
            seat = chooser.choice(loaded.engine.to_act(loaded.state))
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        games.submit(created["id"], tokens[seat], command, None, None, f"cost-{n}")
    raise AssertionError("the game did not end")


def grow(store, created: dict, events: int, seed: int = 0, snapshot: bool = False) -> int:
    """Append random legal decisions to ``created`` until its stream holds at
    least ``events`` events (decided as the platform decides them, appended
    in one transaction: a long stream in a moment; ``snapshot``: with a
    snapshot of the state at the new head).  Returns the head."""
    svc = GameService(store, lambda _gid: None, snapshot_every=10**6)
    loaded = svc.load(created["id"])
    engine = loaded.engine
    with loaded.lock:
        svc.refresh(loaded)
        state, version, head, seed_bytes = clone_state(loaded.state), loaded.version, loaded.last_hash, loaded.seed
    first, chooser, new = version, random.Random(seed), []
    while version < events:
        seat = chooser.choice(engine.to_act(state))
        command = chooser.choice(engine.legal(state, seat))
        decided = engine.decide(state, seat, command, Rng(seed_bytes, domain=version))
        trial = clone_state(state)
        for e in decided:
            trial = engine.evolve(trial, e)
        if engine.result(trial) is not None:
            break  # never finish it here
        meta = {"intent_id": str(uuid.uuid4()), "seat": seat, "received_at": now_iso(), "intent": command.to_json()}
        new += [NewEvent(e.type, e.data, meta) for e in decided]
        state, version = trial, version + len(decided)
    sealed = seal(seed_bytes, created["id"], first + 1, head, new)
    store.append(created["id"], first, sealed, snapshot=(version, state) if snapshot else None)
    return version


def count_fetched_rows(app, monkeypatch) -> list[int]:
    """The rows of each read the app's event store makes from now on, as it makes them."""
    store = app.extensions["quarterdeck"].store
    fetched: list[int] = []
    real_fetch = store._fetch

    def counting_fetch(query, params):
        rows = real_fetch(query, params)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(store, "_fetch", counting_fetch)
    return fetched


def test_a_game_that_never_ends_is_aborted_unrated_at_its_length_cap(capped, ctx, settings):
    svc = capped.extensions["quarterdeck"].games
    players = [f"p{uuid.uuid4().hex[:6]}", f"q{uuid.uuid4().hex[:6]}"]
    # Rated, so the test shows the abort keeps it off the leaderboards.
    created = svc.create_game("nautilus-industries", players, {}, rated=True)
    gid = created["id"]
    opening = ctx.store.read(gid, upto=1)[0].data
    assert opening["max_events"] == CAP
    play_random(capped, created, seed=3)
    events = ctx.store.read(gid)
    assert [e.type for e in events[-2:]] == [GAME_ABORTED, GAME_FINISHED]
    assert events[-2].data == {"reason": LENGTH_CAP, "by": "platform"}
    assert events[-1].data["result"]["reason"] == "aborted"
    # It stopped at the cap: the decision that reached it (it began below the cap; a
    # nautilus-industries decision may append twenty events and more), then the abort.
    before_abort = events[-3].seq
    decision = [e for e in events if e.meta["intent_id"] == events[-3].meta["intent_id"]]
    assert decision[0].seq <= CAP <= before_abort and events[-1].seq == before_abort + 2
    # The intent's batch holds the abort (one intent id), so re-deciding reproduces it.
    assert events[-1].meta["intent_id"] == events[-3].meta["intent_id"]
    report = checks.audit_game(ctx.store, ctx.redis, gid, projection=False)
    assert report.ok, report.render()
    # A later intent is refused; the game is over.
    resp = capped.test_client().post(
        f"/v1/games/{gid}/intents",
        json={"intent": events[-3].meta["intent"]},
        headers=auth(created["seats"][events[-3].meta["seat"]]["token"]),
    )
    assert resp.status_code == 422 and resp.get_json()["error"]["code"] == "game_finished"
    # Unrated: the leaderboards pass it over (once the feed holds it: see
    # support.wait_for_feed_horizon; before, this could pass without folding it).
    wait_for_feed_horizon(ctx.settings.database_url)
    for _ in range(20):
        lb.consume(ctx.redis, ctx.store)
    board = capped.test_client().get("/v1/leaderboards/nautilus-industries?limit=500").get_json()
    assert not {e["player"] for e in board["entries"]} & set(players)


def test_the_cap_is_the_one_the_game_was_created_with(capped, app, ctx):
    """A game keeps the cap of its creation when the setting changes."""
    created = capped.extensions["quarterdeck"].games.create_game("nautilus-industries", ["a", "b"], {})
    play_random(app, created, seed=4)  # served by an app whose cap is the default
    events = ctx.store.read(created["id"])
    assert events[-2].type == GAME_ABORTED
    decision = [e for e in events if e.meta["intent_id"] == events[-1].meta["intent_id"]]
    assert decision[0].seq <= CAP <= events[-3].seq  # the decision that reached the cap began below it


def test_the_feed_is_paged_and_streamed_in_bounded_memory(capped, ctx, settings, monkeypatch):
    svc = GameService(ctx.store, lambda _gid: None)
    created = svc.create_game("nautilus-industries", ["a", "b"], {})
    head = grow(ctx.store, created, 2500)
    gid = created["id"]
    c = capped.test_client()
    # The default page, and the next one from X-Next-After.
    first = c.get(f"/v1/games/{gid}/events", headers=auth(settings.admin_token))
    lines = [json.loads(x) for x in first.get_data(as_text=True).splitlines()]
    assert [x["seq"] for x in lines] == list(range(1, 101))
    assert first.headers["X-Next-After"] == "100"
    second = c.get(f"/v1/games/{gid}/events?after=100&limit=50").get_data(as_text=True).splitlines()
    assert [json.loads(x)["seq"] for x in second] == list(range(101, 151))
    # A larger limit is cut to the maximum.
    big = c.get(f"/v1/games/{gid}/events?limit=1000000", headers=auth(settings.admin_token))
    assert big.headers.get("X-Next-After") is None if head <= 3000 else big.headers["X-Next-After"] == "3000"
    total = len(big.get_data())
    assert big.get_data(as_text=True).count("\n") == min(head, 3000)
    # Streamed: PostgreSQL is read in batches while the page goes out, never the page at once.
    fetched = count_fetched_rows(capped, monkeypatch)
    assert streamed_peak(c, gid, 3000, settings.admin_token)[0] == total
    assert 0 < max(fetched) <= FEED_BATCH, fetched
    # And the memory a page takes does not grow with the page.  tracemalloc counts every
    # thread's allocations (an earlier test's server still winding down, a pool opening a
    # connection), so each size is measured five times and its smallest peak kept: growth
    # with the page would show in every one.
    peaks = {
        n: min((streamed_peak(c, gid, n, settings.admin_token) for _ in range(5)), key=lambda m: m[1])
        for n in (500, 3000)
    }
    print(f"feed pages: peak traced memory {peaks} (bytes)")
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    assert peaks[3000][1] < 1.5 * peaks[500][1], (peaks, others)


def streamed_peak(c, gid: str, limit: int, token: str) -> tuple[int, int]:
    """(bytes of the page, peak Python memory while the app produced it)."""
    resp = c.get(f"/v1/games/{gid}/events?limit={limit}", headers=auth(token), buffered=False)
    assert resp.is_streamed
    tracemalloc.start()
    try:
        size = sum(len(chunk) for chunk in resp.response)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        resp.close()
    return size, peak


def test_a_finished_games_audit_is_computed_once_and_kept(capped, ctx, settings):
    svc = capped.extensions["quarterdeck"].games
    created = svc.create_game("nauticus", ["a", "b"], {})
    play_random(capped, created, seed=5)
    gid = created["id"]
    project_game(ctx.redis, ctx.store, gid)
    c = capped.test_client()
    first = c.get(f"/v1/games/{gid}/audit").get_json()
    assert first["ok"] and "kept" not in first
    again = c.get(f"/v1/games/{gid}/audit").get_json()
    assert again["kept"] is True and again["checks"] == first["checks"]
    kept_at = again["computed_at"]
    assert c.get(f"/v1/games/{gid}/audit").get_json()["computed_at"] == kept_at
    # Only the operator (or the game's organiser) may ask for a fresh one.
    assert c.get(f"/v1/games/{gid}/audit?recheck=true").status_code == 401
    assert c.get(f"/v1/games/{gid}/audit?recheck=true", headers=auth("x" * 43)).status_code == 403
    fresh = c.get(f"/v1/games/{gid}/audit?recheck=true", headers=auth(settings.admin_token)).get_json()
    assert fresh["ok"] and "kept" not in fresh
    later = c.get(f"/v1/games/{gid}/audit").get_json()
    assert later["kept"] is True and later["computed_at"] > kept_at
    # Many at once: one computation, the others answer the kept report.
    with ctx.store.pool.connection() as conn:
        conn.execute("DELETE FROM game_audits WHERE game_id = %s", (gid,))
    answers: list[dict] = []

    def ask() -> None:
        answers.append(capped.test_client().get(f"/v1/games/{gid}/audit").get_json())

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(answers) == 6 and all(a["ok"] for a in answers)
    assert sum(1 for a in answers if not a.get("kept")) == 1


def test_expensive_work_is_bounded_per_process(capped, ctx):
    svc = capped.extensions["quarterdeck"].games
    created = svc.create_game("nauticus", ["a", "b"], {})
    play_random(capped, created, seed=6)
    gate = capped.extensions["quarterdeck_limits"]
    c = capped.test_client()
    taken = [gate.acquire(timeout=1) for _ in range(capped_concurrency(capped))]
    try:
        started = time.monotonic()
        busy = c.get(f"/v1/games/{created['id']}/state")
        assert busy.status_code == 503 and busy.get_json()["error"]["code"] == "busy"
        assert time.monotonic() - started < 5
        assert c.get(f"/v1/games/{created['id']}/export").status_code == 503
    finally:
        for ok in taken:
            if ok:
                gate.release()
    assert c.get(f"/v1/games/{created['id']}/state").status_code == 200


def capped_concurrency(app) -> int:
    return app.extensions["quarterdeck"].settings.expensive_concurrency


def test_the_html_log_pages_are_paged_as_the_feed_is(capped, ctx, settings):
    """docs/API.md "Cost limits": the pages read a stream with the feed's caps.
    ``/games/{id}/log?after=0`` and ``?log=all`` built the whole stream in
    memory (48 of them for a 15,109-event game took 37-58 s each and grew the
    workers to 1 GB): now one page each, and a link to the next."""
    import re

    from service.http.pages import LOG_TAIL

    svc = GameService(ctx.store, lambda _gid: None)
    created = svc.create_game("nautilus-industries", ["a", "b"], {})
    head = grow(ctx.store, created, 700)
    gid = created["id"]
    project_game(ctx.redis, ctx.store, gid)
    c = capped.test_client()

    def seqs(html: str) -> list[int]:
        return [int(s) for s in re.findall(r'<li[^>]*data-seq="(\d+)"', html)]

    fragment = c.get(f"/games/{gid}/log?after=0")
    assert fragment.status_code == 200
    assert seqs(fragment.get_data(as_text=True)) == list(range(1, LOG_TAIL + 1))
    whole = c.get(f"/games/{gid}?log=all")
    assert whole.status_code == 200
    page = whole.get_data(as_text=True)
    assert seqs(page) == list(range(1, 101))  # the feed's default page (QD_FEED_PAGE_DEFAULT)
    following = re.search(r'href="([^"]*log_after=100[^"]*)"', page)
    assert following is not None, "a link to the next page"
    nxt = c.get(following.group(1).replace("&amp;", "&"))
    assert seqs(nxt.get_data(as_text=True)) == list(range(101, 201))
    # The live page's tail is bounded as before (the newest LOG_TAIL).
    live = seqs(c.get(f"/games/{gid}").get_data(as_text=True))
    assert live == list(range(head - LOG_TAIL + 1, head + 1))


def test_48_log_pages_at_once_each_read_one_page(capped, ctx, monkeypatch):
    """docs/API.md "Cost limits", the probe's load: 48 requests at once for the
    whole log of a long game (there, 15,109 events: 37-58 s each, workers grown
    to 1 GB).  Each answers one page, and no read of PostgreSQL returns more
    than a page's rows, however many run together."""
    import re

    from service.http.pages import LOG_TAIL

    svc = GameService(ctx.store, lambda _gid: None)
    created = svc.create_game("nautilus-industries", ["a", "b"], {})
    head = grow(ctx.store, created, 2500, seed=48)
    # The game's seed is drawn at creation, so where a random game ends varies (909 to 4,226
    # events over 200 such games): what the checks below need is a stream several pages long.
    assert head > 2 * max(LOG_TAIL, FEED_BATCH), head
    gid = created["id"]
    project_game(ctx.redis, ctx.store, gid)
    fetched = count_fetched_rows(capped, monkeypatch)
    answers: list[tuple[int, int]] = []

    def get(path: str) -> None:
        resp = capped.test_client().get(path)
        answers.append((resp.status_code, len(re.findall(r'data-seq="', resp.get_data(as_text=True)))))

    paths = [f"/games/{gid}?log=all", f"/games/{gid}/log?after=0"] * 24
    threads = [threading.Thread(target=get, args=(path,)) for path in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(answers) == 48 and {status for status, _ in answers} == {200}, answers
    assert max(lines for _, lines in answers) <= LOG_TAIL, answers
    assert 0 < max(fetched) <= max(LOG_TAIL, FEED_BATCH), sorted(fetched)[-5:]


def test_time_travel_folds_from_the_latest_snapshot_not_the_whole_stream(capped, ctx, settings, monkeypatch):
    """docs/API.md "Cost limits": nothing reads a whole stream into memory to
    answer one request.  ``/state?version=N`` read and folded the N first
    events; now from the latest snapshot at or before N (the same answer)."""
    from service.domain.replay import fold_stream
    from service.games import registry

    svc = GameService(ctx.store, lambda _gid: None)
    created = svc.create_game("nautilus-industries", ["a", "b"], {})
    gid = created["id"]
    snapped = grow(ctx.store, created, 400, snapshot=True)
    head = grow(ctx.store, created, 700, seed=1)
    version = head - 10
    events = ctx.store.read(gid, upto=version)
    whole = fold_stream(registry.get("nautilus-industries"), events)
    store = capped.extensions["quarterdeck"].store
    read = store.read
    counted: list[int] = []

    def counting(*args, **kwargs):
        got = read(*args, **kwargs)
        counted.append(len(got))
        return got

    monkeypatch.setattr(store, "read", counting)
    answer = capped.test_client().get(
        f"/v1/games/{gid}/state?version={version}&seat=0", headers=auth(settings.admin_token)
    )
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert json.loads(json.dumps(whole)) == body["state"]
    assert body["hash"] == events[-1].hash and body["version"] == version
    assert body["last_event"] == {"seq": version, "type": events[-1].type}
    # A few one-event reads (who may see it, the opening), and the fold from the snapshot.
    assert max(counted) <= version - snapped and sum(counted) <= version - snapped + 5, counted
