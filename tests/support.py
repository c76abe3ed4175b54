"""Helpers for tests that play games over HTTP (Flask test client)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from projections.runner import project_game


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play(
    client: Any,
    ctx: Any,
    created: dict[str, Any],
    chooser: random.Random,
    max_intents: int = 50_000,
    stop_after: int | None = None,
) -> int:
    """Play ``created`` (a create answer) by following ``/legal`` only, as a
    third-party client would, projecting synchronously after each intent.
    Stops at the end of the game or after ``stop_after`` intents.  Returns the
    number of intents posted."""
    gid = created["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    project_game(ctx.redis, ctx.store, gid)
    posted = 0
    while posted < max_intents and (stop_after is None or posted < stop_after):
        game = client.get(f"/v1/games/{gid}").get_json()
        if game["status"] == "finished":
            return posted
        seat = chooser.choice(game["to_act"])
        legal = client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[seat])).get_json()
        assert legal["intents"], f"seat {seat} is to act but has no legal intent"
        intent = chooser.choice(legal["intents"])
        resp = client.post(
            f"/v1/games/{gid}/intents",
            json={"intent": intent, "expected_version": legal["version"]},
            headers=auth(tokens[seat]),
        )
        assert resp.status_code == 201, (intent, resp.get_json())
        posted += 1
        project_game(ctx.redis, ctx.store, gid)
    if stop_after is None:
        raise AssertionError(f"game {gid} did not end within {max_intents} intents")
    return posted


def play_fast(
    app: Any,
    created: dict[str, Any],
    seed: int = 0,
    stop_after: int | None = None,
    *,
    intent_prefix: str,
    pause: float = 0,
) -> int:
    """Play ``created`` (a create answer) in-process through the app's game
    service, skipping HTTP and projections, with random legal commands from
    ``random.Random(seed)``.  Stops at the end of the game or after
    ``stop_after`` intents, sleeping ``pause`` seconds after each one (so a
    live reader sees the game grow).  Intent ids are ``intent_prefix`` + a
    counter.  Returns the number of intents posted."""
    games = app.extensions["quarterdeck"].games
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    chooser = random.Random(seed)
    posted = 0
    while stop_after is None or posted < stop_after:
        loaded = games.load(created["id"])
        with loaded.lock:
            games.refresh(loaded)
            if loaded.finished:
                return posted
            seat = chooser.choice(loaded.engine.to_act(loaded.state))
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        games.submit(created["id"], tokens[seat], command.to_json(), None, None, f"{intent_prefix}{posted}")
        posted += 1
        if pause:
            time.sleep(pause)
    return posted


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app on a real loopback socket (threaded), for clients that need
    one (streaming feeds, the example HTTP client); yields its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)
