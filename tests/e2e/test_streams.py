"""The game stream (``GET /v1/games/{id}/stream``) and the waits that share its
machinery (``service/http/live/``), over a real loopback socket: the
board first, one line per change in version order, the end; SSE; the limits
(429, idle, maximum duration, shutdown); waits past the head answered at once
and waits woken by the projection's announcement."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis
import requests
from support import auth, play_fast, projecting, serving

from projections import keys, publish
from projections.runner import project_game
from service.adapters.stream_slots import slot_key
from service.http import live


@pytest.fixture
def server(app) -> Iterator[str]:
    with serving(app) as url:
        yield url


@contextmanager
def local_app(settings: Any, **changes: Any) -> Iterator[Any]:
    """The app with other settings, on its own loopback socket, with a projector."""
    from service.http.app import create_app

    application = create_app(settings.with_(**changes), TESTING=True)
    try:
        with serving(application) as url:
            yield application, url
    finally:
        application.extensions["quarterdeck"].store.pool.close()


def _lines(resp: requests.Response) -> Iterator[dict[str, Any]]:
    for raw in resp.iter_lines():
        if raw:
            yield json.loads(raw)


class Reader(threading.Thread):
    """Reads one stream to its end in the background."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(daemon=True)
        self.url, self.headers = url, headers or {}
        self.lines: list[dict[str, Any]] = []
        self.status = 0
        self.first = threading.Event()

    def run(self) -> None:
        with requests.get(self.url, headers=self.headers, stream=True, timeout=60) as resp:
            self.status = resp.status_code
            self.content_type = resp.headers.get("Content-Type", "")
            if resp.status_code != 200:
                self.body = resp.json()
                self.first.set()
                return
            for line in _lines(resp):
                self.lines.append(line)
                self.first.set()


class Announced(threading.Thread):
    """Every version the projection announces for ``gids`` (``g:{id}:changed``),
    heard from the moment it is built."""

    def __init__(self, redis_url: str, gids: list[str]) -> None:
        super().__init__(daemon=True)
        self.client = redis.Redis.from_url(redis_url)
        self.pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        self.pubsub.subscribe(*(publish.game_channel(g) for g in gids))
        self.versions: dict[str, list[int]] = {g: [] for g in gids}
        self.stop = threading.Event()
        self.start()

    def run(self) -> None:
        # Once stopped, it still drains what has arrived.
        while (message := self.pubsub.get_message(timeout=0.2)) is not None or not self.stop.is_set():
            if message is not None:
                self.versions[publish.game_of(message["channel"].decode())].append(int(message["data"]))

    def close(self) -> None:
        self.stop.set()
        self.join(5)
        self.pubsub.close()
        self.client.close()


def _every_change(announced: list[int], versions: list[int]) -> None:
    """docs/API.md "Streams": after its first line, a stream sends every
    version the projection wrote, in order, none skipped."""
    assert set(announced) and [v for v in sorted(set(announced)) if v > versions[0]] == versions[1:]


def _board(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in ("type", "legal")}


def test_the_stream_starts_with_the_board_and_follows_every_change_in_order_to_the_end(server, app, new_game, settings):
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    viewers = {
        "spectator": {},
        "seat 0": auth(created["seats"][0]["token"]),
        "seat 1": auth(created["seats"][1]["token"]),
        "organiser": auth(settings.admin_token),
    }
    before = {who: requests.get(f"{server}/v1/games/{gid}", headers=h, timeout=10).json() for who, h in viewers.items()}
    legal0 = requests.get(f"{server}/v1/games/{gid}/legal", headers=viewers["seat 0"], timeout=10).json()
    readers = {who: Reader(f"{server}/v1/games/{gid}/stream", h) for who, h in viewers.items()}
    announced = Announced(settings.redis_url, [gid])
    for r in readers.values():
        r.start()
    for r in readers.values():
        assert r.first.wait(20), "no first line"
    started = time.monotonic()
    played = play_fast(app, created, 9, pause=0.01, intent_prefix="s")
    for r in readers.values():
        r.join(60)
        assert not r.is_alive(), "the stream did not end when the game finished"
    announced.close()
    assert played > 20
    for who, r in readers.items():
        assert r.status == 200 and r.content_type.startswith("application/x-ndjson")
        boards = [x for x in r.lines if x["type"] == "board"]
        assert all(list(b)[:2] == ["type", "version"] for b in boards)  # they lead the line (API.md, "Streams")
        # First line: exactly what GET showed this caller, plus legal for a seat.
        assert r.lines[0]["type"] == "board"
        assert _board(r.lines[0]) == before[who], who
        assert ("legal" in r.lines[0]) == who.startswith("seat")
        # In version order, never twice, ending with the finished game and an end line.
        versions = [b["version"] for b in boards]
        assert versions == sorted(set(versions)), who
        assert len(boards) > 5, f"{who}: {len(boards)} board lines for {played} intents"
        _every_change(announced.versions[gid], versions)
        assert boards[-1]["status"] == "finished" and boards[-1]["result"]
        assert r.lines[-1] == {"type": "end", "reason": "finished", "version": boards[-1]["version"]}
        after = requests.get(f"{server}/v1/games/{gid}", headers=viewers[who], timeout=10).json()
        assert _board(boards[-1]) == after, who
    assert readers["seat 0"].lines[0]["legal"] == legal0["intents"]
    assert all(b["seat"] == 1 for b in readers["seat 1"].lines if b["type"] == "board")
    assert time.monotonic() - started < 60


def test_every_line_is_the_board_of_its_version(server, app, new_game, ctx, settings):
    """Lines under concurrent intents on two games: each board line's view is
    the engine's view of the stream folded to that version (time travel; the
    game is finished, so anyone may travel)."""
    games = [new_game("nauticus", ["ann", "bob"]) for _ in range(2)]
    announced = Announced(settings.redis_url, [g["id"] for g in games])
    readers = [Reader(f"{server}/v1/games/{g['id']}/stream", auth(g["seats"][1]["token"])) for g in games]
    for r in readers:
        r.start()
        assert r.first.wait(20)
    threads = [
        threading.Thread(target=play_fast, args=(app, g, 3 + i), kwargs={"intent_prefix": f"c{i}"})
        for i, g in enumerate(games)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for g, r in zip(games, readers, strict=True):
        head = ctx.store.version(g["id"])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (not r.lines or r.lines[-1].get("version") != head):
            time.sleep(0.05)
        boards = [x for x in r.lines if x["type"] == "board"]
        assert boards[-1]["version"] == head and boards[-1]["status"] == "finished"
        r.join(20)  # and the stream ended with the game
        assert r.lines[-1]["type"] == "end"
        versions = [b["version"] for b in boards]
        assert versions == sorted(set(versions))
        announced.close()
        _every_change(announced.versions[g["id"]], versions)
        for b in [*boards[:: max(1, len(boards) // 8)], boards[-1]]:
            travel = requests.get(
                f"{server}/v1/games/{g['id']}/state",
                params={"version": b["version"], "seat": 1},
                headers=auth(settings.admin_token),
                timeout=10,
            ).json()
            assert b["view"] == travel["view"], b["version"]
            assert b["to_act"] == travel["to_act"]


def test_a_line_from_the_board_channel_is_the_line_from_the_hash(app, new_game, ctx):
    """Hidden information: a stream's later lines are shaped from what the
    board channel carried (``publish.board_payload``), its first from the
    hash; for every kind of viewer both give the same bytes, so a stream
    carries exactly what ``GET`` shows that caller at each version."""
    from service.games.base import ADMIN
    from service.http.streams import board_reader

    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 5, stop_after=6, intent_prefix="h")
    gid = created["id"]
    project_game(ctx.redis, ctx.store, gid)
    fields = {k.decode(): v for k, v in ctx.redis.hgetall(keys.game(gid)).items()}
    carried = publish.parse_board(publish.board_payload(fields))
    assert "state" not in carried and "auth" not in carried
    for viewer in (None, 0, 1, ADMIN):
        _, read, shape = board_reader(gid, viewer)
        version, line = read(ctx.redis)
        assert version == int(fields["version"]) > 1
        assert shape(carried) == line, viewer


def test_server_sent_events_form_resumes_and_says_when_to_stop(server, app, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 4, intent_prefix="e")
    project_game(app.extensions["quarterdeck"].components.redis, app.extensions["quarterdeck"].store, gid)
    sse = {"Accept": "text/event-stream"}
    resp = requests.get(f"{server}/v1/games/{gid}/stream", headers=sse, timeout=30)
    assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("text/event-stream")
    blocks = [dict(line.split(": ", 1) for line in b.splitlines()) for b in resp.text.split("\n\n") if b.strip()]
    assert blocks[0] == {"retry": "2000"}
    board = json.loads(blocks[1]["data"])
    assert blocks[1]["event"] == "board" and blocks[1]["id"] == str(board["version"])
    assert blocks[-1]["event"] == "end" and json.loads(blocks[-1]["data"])["reason"] == "finished"
    # An EventSource reconnecting after the end (Last-Event-ID: the last version) is told to stop.
    again = requests.get(
        f"{server}/v1/games/{gid}/stream", headers=sse | {"Last-Event-ID": blocks[1]["id"]}, timeout=30
    )
    assert again.status_code == 204
    # The events feed's SSE form: retry in its first event, Last-Event-ID honoured, 204 after the end.
    feed = requests.get(f"{server}/v1/games/{gid}/events?follow=1", headers=sse | {"Last-Event-ID": "3"}, timeout=30)
    first = dict(line.split(": ", 1) for line in feed.text.split("\n\n")[0].splitlines())
    assert first["retry"] == "2000" and first["id"] == "4"
    head = board["version"]
    done = requests.get(f"{server}/v1/games/{gid}/events?follow=1", headers=sse | {"Last-Event-ID": str(head)})
    assert done.status_code == 204


def test_stream_refusals_come_before_any_byte(server, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    bad = requests.get(f"{server}/v1/games/{created['id']}/stream", headers=auth("not-a-token"), timeout=10)
    assert bad.status_code == 403 and bad.json()["error"]["code"] == "invalid_token"
    missing = requests.get(f"{server}/v1/games/00000000-0000-4000-8000-000000000000/stream", timeout=10)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "game_not_found"


def test_streams_per_client_address_are_limited(settings, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    url_of = lambda base: f"{base}/v1/games/{created['id']}/stream"  # noqa: E731
    # Earlier tests of this pytest worker share its Redis database and may still
    # hold a lease from 127.0.0.1 (a minute at most); this test counts from zero.
    with redis.Redis.from_url(settings.redis_url) as r:
        r.delete(slot_key("address", "127.0.0.1"))
    # Quick pings: the server notices a client that left at its next write.
    with local_app(settings, streams_per_address=2, stream_ping_seconds=0.3) as (_, base):
        held = [requests.get(url_of(base), stream=True, timeout=30) for _ in range(2)]
        assert all(r.status_code == 200 for r in held)
        refused = requests.get(url_of(base), timeout=10)
        assert refused.status_code == 429
        assert refused.headers["Retry-After"] == "15"
        error = refused.json()["error"]
        assert error["code"] == "too_many_streams" and error["details"]["limit"] == 2
        # The live events feed counts too; a plain read of it does not.
        feed = requests.get(f"{base}/v1/games/{created['id']}/events?follow=1", timeout=10)
        assert feed.status_code == 429
        assert requests.get(f"{base}/v1/games/{created['id']}/events", timeout=10).status_code == 200
        held[0].close()
        deadline = time.monotonic() + 10
        while True:  # the server notices the closed socket at its next write or wait
            again = requests.get(url_of(base), stream=True, timeout=10)
            if again.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert again.status_code == 200
        again.close()
        held[1].close()


def test_pings_and_the_idle_and_maximum_durations(settings, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    with local_app(settings, stream_ping_seconds=0.2, stream_idle_seconds=1.0) as (_, base):
        started = time.monotonic()
        lines = list(_lines(requests.get(f"{base}/v1/games/{created['id']}/stream", stream=True, timeout=30)))
        assert 0.9 < time.monotonic() - started < 10
        assert lines[0]["type"] == "board"
        assert {"type": "ping"} in lines
        assert lines[-1] == {"type": "end", "reason": "idle", "version": lines[0]["version"]}
    with local_app(settings, stream_ping_seconds=5.0, stream_max_seconds=0.5) as (_, base):
        lines = list(_lines(requests.get(f"{base}/v1/games/{created['id']}/stream", stream=True, timeout=30)))
        assert [x["type"] for x in lines] == ["board", "end"]
        assert lines[-1]["reason"] == "max_duration"


def test_a_stopping_server_ends_streams_and_feeds_with_a_line_to_resume_from(settings, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    with local_app(settings) as (application, base):
        stream = Reader(f"{base}/v1/games/{gid}/stream")
        feed = Reader(f"{base}/v1/games/{gid}/events?follow=1&timeout=30")
        stream.start()
        feed.start()
        assert stream.first.wait(20) and feed.first.wait(20)
        application.extensions[live.EXTENSION].shutdown()
        stream.join(10)
        feed.join(10)
        assert not stream.is_alive() and not feed.is_alive()
    head = stream.lines[0]["version"]
    assert stream.lines[-1] == {"type": "end", "reason": "shutdown", "version": head}
    assert feed.lines[-1] == {"type": "end", "reason": "shutdown", "after": head}
    assert [x["seq"] for x in feed.lines[:-1]] == list(range(1, head + 1))


def test_a_wait_past_the_stream_head_is_answered_at_once(client, new_game, ctx, settings):
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    head = ctx.store.version(gid)
    started = time.monotonic()
    body = client.get(f"/v1/games/{gid}?min_version={head + 1}").get_json()
    # The bound of a wait in the tests' settings is max_wait_seconds (3 s).
    assert time.monotonic() - started < settings.max_wait_seconds / 2
    assert body["version"] == head


def test_a_wait_is_woken_by_the_projection(app, new_game, ctx, settings):
    """No worker runs until the wait has started; the projection's announcement
    ends it (well within its bound, and with the version asked for)."""
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 2, stop_after=3, intent_prefix="w")  # committed, not projected
    head = ctx.store.version(gid)
    assert int(ctx.redis.hget(keys.game(gid), "version")) < head
    answer: dict[str, Any] = {}

    def read() -> None:
        t0 = time.monotonic()
        answer["body"] = app.test_client().get(f"/v1/games/{gid}?min_version={head}").get_json()
        answer["seconds"] = time.monotonic() - t0

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.5)
    project_game(ctx.redis, ctx.store, gid)  # the worker's write, with its announcement
    reader.join(30)
    assert answer["body"]["version"] == head
    assert answer["seconds"] < settings.max_wait_seconds - 0.5


def test_a_read_model_vanishing_mid_wait_for_a_version_still_to_come(app, new_game, ctx, settings):
    """Like tests/faults/test_flush_mid_wait.py, for a version that is in the
    stream but not yet in the read model (past-the-head versions no longer wait)."""
    from service.http.app import create_app

    patient = create_app(settings.with_(max_wait_seconds=10.0), TESTING=True)
    client = patient.test_client()
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 5, stop_after=3, intent_prefix="v")  # committed, not projected yet
    head = ctx.store.version(gid)
    answer: dict[str, Any] = {}

    def wait() -> None:
        resp = client.get(f"/v1/games/{gid}?min_version={head}")
        answer["status"], answer["body"] = resp.status_code, resp.get_json()

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.3)
    ctx.redis.delete(keys.game(gid))  # mid-wait: the model vanishes
    time.sleep(0.5)
    with projecting(patient.extensions["quarterdeck"].components):  # the worker comes
        waiter.join(15)
    patient.extensions["quarterdeck"].store.pool.close()
    assert answer["status"] == 200, answer
    assert answer["body"]["version"] == head


def test_the_projection_announces_each_write(app, new_game, ctx):
    """What followers are woken by: one message per write, after it, with the version written."""
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    sub = redis.Redis.from_url(app.extensions["quarterdeck"].settings.redis_url).pubsub(ignore_subscribe_messages=True)
    sub.subscribe(f"g:{{{gid}}}:changed")
    time.sleep(0.1)
    play_fast(app, created, 1, stop_after=2, intent_prefix="p")
    version = project_game(ctx.redis, ctx.store, gid)
    heard = None
    deadline = time.monotonic() + 5
    while heard is None and time.monotonic() < deadline:
        heard = sub.get_message(timeout=0.5)
    sub.close()
    assert heard is not None and int(heard["data"]) == version
    assert int(ctx.redis.hget(keys.game(gid), "version")) == version


def test_the_account_stream_tells_of_tables_turns_and_finished_games(server, app, settings):
    """Two accounts at a table: each hears the table start, its own turns
    (at the versions they came) and the end; with a catch-up of the turns
    pending when the stream opens."""
    import secrets

    suffix = secrets.token_hex(3)
    keys_of = {}
    for name in ("ann", "bob"):
        resp = requests.post(f"{server}/v1/accounts", json={"handle": f"{name}_{suffix}"}, timeout=10)
        assert resp.status_code == 201, resp.text
        keys_of[name] = resp.json()["key"]
    anon = requests.get(f"{server}/v1/account/stream", timeout=10)
    assert anon.status_code == 401 and anon.json()["error"]["code"] == "key_required"
    ann = Reader(f"{server}/v1/account/stream", auth(keys_of["ann"]))
    ann.start()
    time.sleep(0.5)  # registered before anything happens
    table = requests.post(
        f"{server}/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(keys_of["ann"]), timeout=10
    ).json()
    joined = requests.post(f"{server}/v1/tables/{table['id']}/join", headers=auth(keys_of["bob"]), timeout=10)
    assert joined.status_code == 200, joined.text
    gid = joined.json()["game_id"]
    assert gid
    seat_key = {}
    deadline = time.monotonic() + 20
    while len(seat_key) < 2 and time.monotonic() < deadline:
        for key in keys_of.values():
            game = requests.get(f"{server}/v1/games/{gid}", headers=auth(key), timeout=10)
            if game.status_code == 200 and game.json().get("seat") is not None:
                seat_key[game.json()["seat"]] = key
        time.sleep(0.1)
    ann_seat = next(s for s, k in seat_key.items() if k == keys_of["ann"])
    # bob's stream opens late: it starts with his pending turn, if any.
    version = requests.get(f"{server}/v1/games/{gid}?min_version=1", timeout=10).json()
    bob = Reader(f"{server}/v1/account/stream", auth(keys_of["bob"]))
    bob.start()
    assert bob.first.wait(5) == (1 - ann_seat in version["to_act"])
    turns_of_ann = []
    at = version["version"]
    for _ in range(400):
        game = requests.get(f"{server}/v1/games/{gid}?min_version={at}", timeout=30).json()
        if game["status"] == "finished":
            break
        seat = game["to_act"][0]
        if seat == ann_seat:
            turns_of_ann.append(game["version"])
        legal = requests.get(
            f"{server}/v1/games/{gid}/legal?min_version={at}", headers=auth(seat_key[seat]), timeout=30
        ).json()
        moved = requests.post(
            f"{server}/v1/games/{gid}/intents",
            json={"intent": legal["intents"][0], "expected_version": legal["version"]},
            headers=auth(seat_key[seat]),
            timeout=10,
        )
        assert moved.status_code == 201, moved.text
        at = moved.json()["version"]
    else:
        pytest.fail("the game did not end")
    # Both players hear of the end; each stream is its own connection, so wait for both.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(
        any(x["type"] == "game_finished" for x in reader.lines) for reader in (ann, bob)
    ):
        time.sleep(0.1)
    lines = [x for x in ann.lines if x["type"] != "ping"]
    assert lines[0] == {"type": "table_started", "table_id": table["id"], "game_id": gid}
    assert lines[-1]["type"] == "game_finished" and lines[-1]["game_id"] == gid
    turns = [x["version"] for x in lines if x["type"] == "your_turn"]
    assert all(x["game_id"] == gid for x in lines)
    assert turns == sorted(turns) and set(turns_of_ann) <= set(turns)
    assert any(x["type"] == "game_finished" for x in bob.lines)
