"""A read model that vanishes while a query waits for ``?min_version`` (Redis
flushed or restarted empty under load) is projected again: the answer is a
200 at the stream's head, never a 500; the query asks the worker to catch
the game up, it never projects it itself.  Found by the soak: a flushed Redis
mid-run turned every waiting query into ``internal_error``."""

from __future__ import annotations

import threading
import time

import pytest
from support import auth, projecting

from projections import keys
from projections.runner import project_game


@pytest.mark.parametrize("suffix", ["", "/legal"])
def test_read_model_deleted_mid_wait_is_rebuilt(client, app, new_game, ctx, suffix):
    game = new_game(game="nauticus", players=["ann", "bob"])
    gid = game["id"]
    project_game(ctx.redis, ctx.store, gid)
    head = ctx.store.version(gid)

    def vanish() -> None:
        for _ in range(5):
            time.sleep(0.2)
            ctx.redis.delete(keys.game(gid))

    thief = threading.Thread(target=vanish)
    thief.start()
    # A version that never comes: the query waits its whole bound, asking the
    # worker (running, as in `make run`) to catch up each time the model vanishes.
    with projecting(app.extensions["quarterdeck"].components):
        resp = client.get(f"/v1/games/{gid}{suffix}?min_version={head + 50}", headers=auth(game["seats"][0]["token"]))
    thief.join()
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["version"] == head
