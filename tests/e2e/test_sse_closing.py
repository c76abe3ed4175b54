"""A browser's ``EventSource`` on a finished game's events feed stops: checked
at the protocol level, with a client that follows the WHATWG EventSource
processing model (``retry:`` sets the reconnection delay, ``id:`` the last
event id, a closed response is reconnected with ``Last-Event-ID``, and a
``204`` makes it stop for good).  It receives every event exactly once,
``GameFinished`` last (the closing event), and never replays the game.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support import play_fast, serving

SSE = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def base_url(app) -> Iterator[str]:
    with serving(app) as url:
        yield url


def _blocks(text: str) -> list[dict[str, str]]:
    """SSE blocks as field -> value (comments dropped)."""
    out = []
    for raw in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in raw.splitlines():
            if line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
        if fields:
            out.append(fields)
    return out


class EventSource:
    """What a browser does, request by request (no JavaScript: the protocol)."""

    def __init__(self, url: str):
        self.url = url
        self.last_event_id: str | None = None
        self.retry_ms = 3000
        self.connections = 0
        self.events: list[dict[str, Any]] = []
        self.closed = False

    def run(self, max_connections: int = 5) -> None:
        while not self.closed and self.connections < max_connections:
            headers = dict(SSE)
            if self.last_event_id is not None:
                headers["Last-Event-ID"] = self.last_event_id
            self.connections += 1
            resp = requests.get(self.url, headers=headers, timeout=60)
            if resp.status_code == 204:
                self.closed = True  # "fail the connection": no reconnection
                return
            assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("text/event-stream")
            for block in _blocks(resp.text):
                if "retry" in block:
                    self.retry_ms = int(block["retry"])
                if "id" in block:
                    self.last_event_id = block["id"]
                if "data" in block:
                    self.events.append({"event": block.get("event", "message"), "data": json.loads(block["data"])})
            # The response ended: a browser waits retry_ms and reconnects (not slept here).


@pytest.mark.parametrize("follow", [True, False], ids=["live", "plain"])
def test_an_event_source_on_a_finished_game_stops_after_one_pass(base_url, app, new_game, follow):
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 3, intent_prefix=f"sse-{follow}-")
    head = app.extensions["quarterdeck"].store.version(gid)
    # A live feed starts from the game's read model, as a stream does: wait until it is
    # projected, so that the first connection is the one pass (not a 503 retried).
    projected = requests.get(f"{base_url}/v1/games/{gid}", params={"min_version": head}, timeout=30)
    assert projected.status_code == 200 and projected.json()["version"] == head, projected.text
    url = f"{base_url}/v1/games/{gid}/events" + ("?follow=1&timeout=5" if follow else "")
    source = EventSource(url)
    source.run()
    assert source.closed, "the client would reconnect for ever"
    assert source.connections == 2, "one pass over the game, then a reconnection answered 204"
    seqs = [e["data"]["seq"] for e in source.events if "seq" in e["data"]]
    assert seqs == list(range(1, head + 1)), "every event exactly once, in order, never replayed"
    # The closing event: GameFinished, last (a client closes on it).
    assert source.events[-1]["event"] == "GameFinished" and source.events[-1]["data"]["seq"] == head
    if follow:
        assert source.retry_ms == 2000
    assert source.last_event_id == str(head)
