"""The live feed (``?follow=1``) over a real socket: chunked NDJSON that follows
a game as it grows, ends by itself when the game finishes, and gives up after
its bounded idle timeout.  Also its Server-Sent Events form."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support import play_fast, serving

from service.audit import verify


@pytest.fixture
def server(app) -> Iterator[str]:
    """The app on a real loopback socket (threaded), for streaming clients."""
    with serving(app) as url:
        yield url


def test_follow_streams_a_game_as_it_grows_and_ends_with_it(server, app, new_game, settings):
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    lines: list[dict[str, Any]] = []
    arrivals: list[float] = []

    def read() -> None:
        with requests.get(
            f"{server}/v1/games/{gid}/events?follow=1&timeout=10",
            headers={"Authorization": f"Bearer {settings.admin_token}"},
            stream=True,
            timeout=60,
        ) as resp:
            assert resp.status_code == 200
            assert resp.headers["Content-Type"].startswith("application/x-ndjson")
            assert resp.headers.get("Transfer-Encoding") == "chunked"
            for raw in resp.iter_lines():
                if raw:
                    lines.append(json.loads(raw))
                    arrivals.append(time.monotonic())

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.5)
    started = time.monotonic()
    played = play_fast(app, created, 9, pause=0.005, intent_prefix="l")
    finished_at = time.monotonic()
    reader.join(30)
    assert not reader.is_alive(), "the live feed did not end when the game finished"
    assert played > 20
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[-1]["type"] == "GameFinished"
    # Events arrived while the game was being played, not all at the end.
    assert sum(1 for t in arrivals if started <= t < finished_at - 0.2) > 10
    seed = bytes.fromhex(lines[-1]["data"]["seed"])
    assert verify.check_chain(gid, lines, seed)["ok"] is True


def test_follow_ends_after_its_idle_timeout(server, app, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 1, stop_after=3, intent_prefix="l")
    started = time.monotonic()
    resp = requests.get(f"{server}/v1/games/{created['id']}/events?follow=1&timeout=1", timeout=30)
    elapsed = time.monotonic() - started
    assert resp.status_code == 200
    lines = [json.loads(x) for x in resp.text.splitlines()]
    assert lines and lines[-1]["seq"] == len(lines)
    assert 0.9 <= elapsed < 5, elapsed


def test_follow_on_a_finished_game_returns_at_once(server, app, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 4, intent_prefix="l")
    started = time.monotonic()
    resp = requests.get(f"{server}/v1/games/{created['id']}/events?follow=1&timeout=30&after=3", timeout=30)
    assert time.monotonic() - started < 5
    lines = [json.loads(x) for x in resp.text.splitlines()]
    assert lines[0]["seq"] == 4 and lines[-1]["type"] == "GameFinished"
    assert not any(line["redacted"] for line in lines)


def test_server_sent_events_form(server, app, new_game):
    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 4, intent_prefix="l")
    resp = requests.get(
        f"{server}/v1/games/{created['id']}/events?follow=1",
        headers={"Accept": "text/event-stream"},
        timeout=30,
    )
    assert resp.headers["Content-Type"].startswith("text/event-stream")
    blocks = [b for b in resp.text.split("\n\n") if b.strip()]
    first = dict(line.split(": ", 1) for line in blocks[0].splitlines())
    assert first["id"] == "1" and first["event"] == "GameCreated"
    assert json.loads(first["data"])["seq"] == 1
    last = dict(line.split(": ", 1) for line in blocks[-1].splitlines())
    assert last["event"] == "GameFinished"


def test_a_live_feed_starts_from_the_read_model_as_a_stream_does(app, new_game, settings, monkeypatch):
    """docs/PERFORMANCE.md "Live delivery": a follower of ``/events?follow=1`` cost
    what a game stream's did not (``/healthz`` at 210-270 ms under 200 of them,
    against 1.9 ms under 200 streams).  Each started with five PostgreSQL reads
    (the game, its seat tokens, its opening, its head twice) before the events;
    now who is calling, the rules and the head come from the read model, as for
    a stream, and PostgreSQL is read once, for the events."""
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    store = app.extensions["quarterdeck"].store
    queries: list[str] = []
    fetch = store._fetch

    def counting(query, params):
        queries.append(query)
        return fetch(query, params)

    monkeypatch.setattr(store, "_fetch", counting)
    c = app.test_client()
    token = created["seats"][0]["token"]
    for headers in ({}, {"Authorization": f"Bearer {token}"}, {"Authorization": f"Bearer {settings.admin_token}"}):
        queries.clear()
        resp = c.get(f"/v1/games/{gid}/events?follow=1&timeout=0", headers=headers)
        lines = [json.loads(x) for x in resp.get_data(as_text=True).splitlines()]
        assert resp.status_code == 200 and lines and lines[0]["seq"] == 1
        assert len(queries) <= 1, queries
