"""Resuming the game stream and the events feed with ``Last-Event-ID``
(docs/API.md, "Streams"): a reconnecting ``EventSource`` gets every board it
missed, and a header that is not a version is a clear 400, never a 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support import play_fast, serving

from projections.runner import project_game


@pytest.fixture
def server(app) -> Iterator[str]:
    with serving(app) as url:
        yield url


SSE = {"Accept": "text/event-stream"}


@pytest.mark.parametrize("value", ["²", "١٢", "3x", "-1", "99999999999"])
@pytest.mark.parametrize("path", ["stream", "events", "events?follow=1"])
def test_a_last_event_id_that_is_not_a_version_is_a_400(client, new_game, path, value):
    """docs/API.md "Streams": ``Last-Event-ID`` is a version (a seq for the feed);
    Unicode digits (``str.isdigit`` accepts them, ``int`` does not) answered 500."""
    gid = new_game("nauticus", ["ann", "bob"])["id"]
    resp = client.get(f"/v1/games/{gid}/{path}", headers=SSE | {"Last-Event-ID": value})
    assert resp.status_code == 400, resp.data[:300]
    assert resp.get_json()["error"]["code"] == "invalid_last_event_id"


def _sse_blocks(resp: requests.Response) -> Iterator[dict[str, str]]:
    buf = ""
    for chunk in resp.iter_content(chunk_size=None, decode_unicode=True):
        buf += chunk
        while "\n\n" in buf:
            block, buf = buf.split("\n\n", 1)
            if block.strip():
                yield dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)


def test_sse_resume_sends_every_board_after_last_event_id(server, app, new_game):
    """docs/API.md "Streams": a reconnecting EventSource's stream "starts with
    the first board newer than that version": after three one-decision moves,
    ``Last-Event-ID: V`` gets the boards of V+1, V+2 and V+3, not only the newest."""
    components = app.extensions["quarterdeck"].components
    created = new_game("nauticus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 3, stop_after=2, intent_prefix="a")
    resumed_at = project_game(components.redis, components.store, gid)
    moves = []
    for i in range(3):
        play_fast(app, created, 10 + i, stop_after=1, intent_prefix=f"b{i}-")
        moves.append(project_game(components.redis, components.store, gid))
    assert len(set(moves)) == 3 and moves[0] > resumed_at
    boards: list[dict[str, Any]] = []
    with requests.get(
        f"{server}/v1/games/{gid}/stream", headers=SSE | {"Last-Event-ID": str(resumed_at)}, stream=True, timeout=30
    ) as resp:
        assert resp.status_code == 200
        for block in _sse_blocks(resp):
            if block.get("event") == "board":
                boards.append({**json.loads(block["data"]), "sse_id": int(block["id"])})
                if boards[-1]["version"] >= moves[-1]:
                    break
    assert [b["sse_id"] for b in boards] == moves
    assert [b["version"] for b in boards] == moves
    # Each resumed board is the board that version showed (its whole body, as GET shaped it then).
    assert all(b["type"] == "board" and "to_act" in b and "view" in b and "status" in b for b in boards)
