"""The API projects its own commits (``projections.runner.project_commit``,
docs/PERFORMANCE.md "Eighth session"): the same bytes as the worker's catch-up and a
rebuild, one guarded write, and everything it cannot do left to the worker."""

from __future__ import annotations

import random
import time

import pytest
from rq import Queue
from support import auth

from projections import keys, publish
from projections.runner import project_commit, project_game
from service.core.commands import Committed
from workers import nudge

GAMES = ["nauticus", "nautilus-industries", "waters-of-nereus"]


def _post_legal(client, game, chooser: random.Random) -> dict:
    """One legal intent, chosen from the command side's own state (no read model read)."""
    gid = game["id"]
    tokens = {s["seat"]: s["token"] for s in game["seats"]}
    svc = client.application.extensions["quarterdeck"].games
    loaded = svc.load(gid)
    with loaded.lock:
        svc.refresh(loaded)
        seat = chooser.choice(loaded.engine.to_act(loaded.state))
        intent = chooser.choice(loaded.engine.legal(loaded.state, seat)).to_json()
        version = loaded.version
    resp = client.post(
        f"/v1/games/{gid}/intents",
        json={"intent": intent, "expected_version": version},
        headers=auth(tokens[seat]),
    )
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def _dirty(ctx, settings, gid: str) -> bool:
    return bool(ctx.redis.sismember(nudge.dirty(nudge.shard_of(gid, settings.projection_shards)), gid))


@pytest.mark.parametrize("game_name", GAMES)
def test_each_intent_is_visible_at_once_with_the_bytes_a_rebuild_gives(client, new_game, ctx, settings, game_name):
    """No worker runs: after each 201 the game's hash is at the answer's version, no
    job was queued and the game is not marked for the worker.  Then the hash equals,
    byte for byte, what the worker's fold of the whole stream writes."""
    game = new_game(game_name, ["ann", "bob"])
    gid = game["id"]
    queue = Queue(settings.queue_name, connection=ctx.redis)
    jobs_before = queue.count
    chooser = random.Random(31)
    for _ in range(25):
        loaded = client.application.extensions["quarterdeck"].games.load(gid)
        if loaded.finished:
            break
        answer = _post_legal(client, game, chooser)
        if any(e["type"] == "GameFinished" for e in answer["events"]):
            break  # the finishing commit is the worker's (tested below)
        assert int(ctx.redis.hget(keys.game(gid), "version")) == answer["version"]
        assert not _dirty(ctx, settings, gid)
    assert queue.count == jobs_before
    live = ctx.redis.hgetall(keys.game(gid))
    ctx.redis.delete(keys.game(gid))
    project_game(ctx.redis, ctx.store, gid)
    assert ctx.redis.hgetall(keys.game(gid)) == live


def test_the_write_announces_the_board_and_the_version(client, new_game, ctx):
    """Followers hear an inline write as they hear the worker's: the board, then the
    version (projections/publish.py), from the same atomic write."""
    game = new_game("nauticus", ["ann", "bob"])
    gid = game["id"]
    sub = ctx.redis.pubsub(ignore_subscribe_messages=True)
    sub.subscribe(publish.game_channel(gid), publish.board_channel(gid))
    time.sleep(0.1)
    answer = _post_legal(client, game, random.Random(32))
    heard = []
    deadline = time.monotonic() + 5
    while len(heard) < 2 and time.monotonic() < deadline:
        message = sub.get_message(timeout=0.5)
        if message:
            heard.append(message)
    sub.close()
    assert [m["channel"].decode() for m in heard] == [publish.board_channel(gid), publish.game_channel(gid)]
    board = publish.parse_board(heard[0]["data"])
    assert int(board["version"]) == answer["version"] == int(heard[1]["data"])
    assert "state" not in board and "auth" not in board  # hidden information stays in the hash


def test_a_read_model_behind_or_missing_is_left_to_the_worker(client, new_game, ctx, settings, run_worker, monkeypatch):
    """The write is guarded by the checkpoint: a hash at another version than the one
    the commit extended (behind: a commit the worker has not projected yet) or no hash
    at all (its first write, a retention expiry) is not written; the game is marked for
    the worker, which catches it up from the stream."""
    game = new_game("nautilus-industries", ["ann", "bob"])
    gid = game["id"]
    chooser = random.Random(33)
    svc = client.application.extensions["quarterdeck"].games
    projected = svc.project
    with monkeypatch.context() as m:
        m.setattr(svc, "project", lambda _done: False)  # this commit goes to the worker only
        _post_legal(client, game, chooser)
    behind = ctx.redis.hgetall(keys.game(gid))
    assert svc.project is projected
    _post_legal(client, game, chooser)  # the hash is one commit behind: not written here
    assert ctx.redis.hgetall(keys.game(gid)) == behind
    assert _dirty(ctx, settings, gid)
    run_worker()
    assert int(ctx.redis.hget(keys.game(gid), "version")) == ctx.store.version(gid)
    # No hash at all: nothing is created here either.
    ctx.redis.delete(keys.game(gid))
    _post_legal(client, game, chooser)
    assert not ctx.redis.exists(keys.game(gid))
    assert _dirty(ctx, settings, gid)
    run_worker()
    assert int(ctx.redis.hget(keys.game(gid), "version")) == ctx.store.version(gid)


def test_the_guard_refuses_a_commit_older_than_the_checkpoint(client, new_game, ctx):
    """A late inline write (the worker, or another API process, wrote a newer version
    first) changes nothing: the guard compares the checkpoint in Redis, atomically."""
    game = new_game("nauticus", ["ann", "bob"])
    gid = game["id"]
    svc = client.application.extensions["quarterdeck"].games
    _post_legal(client, game, random.Random(34))
    loaded = svc.load(gid)
    before = ctx.redis.hgetall(keys.game(gid))
    head = ctx.store.read(gid, after=loaded.version - 1)
    late = Committed(gid, loaded.engine, loaded.version - 2, head, loaded.state, False, svc.opening(loaded))
    assert project_commit(ctx.redis, late) is False
    assert ctx.redis.hgetall(keys.game(gid)) == before


def test_the_finishing_commit_is_the_workers(client, new_game, ctx, settings, run_worker):
    """A commit that ends the game also moves the game lists, the leaderboards and a
    tournament: only the worker does those, so it is not written inline."""
    game = new_game("nauticus", ["ann", "bob"])
    gid = game["id"]
    resp = client.post(
        f"/v1/games/{gid}/intents", json={"intent": {"type": "resign"}}, headers=auth(game["seats"][0]["token"])
    )
    assert resp.status_code == 201, resp.get_json()
    assert ctx.redis.hget(keys.game(gid), "status") == b"active"
    assert _dirty(ctx, settings, gid)
    run_worker()
    assert ctx.redis.hget(keys.game(gid), "status") == b"finished"
    assert int(ctx.redis.hget(keys.game(gid), "version")) == ctx.store.version(gid)


def test_a_failing_inline_write_leaves_the_intent_standing_and_the_worker_nudged(
    client, new_game, ctx, settings, run_worker, monkeypatch
):
    """Redis refusing the write (or any error in it) is not the intent's failure: the
    201 stands and the worker is asked, as before there was an inline write."""
    import redis

    game = new_game("nauticus", ["ann", "bob"])
    gid = game["id"]
    svc = client.application.extensions["quarterdeck"].games

    def broken(_done):
        raise redis.ConnectionError("Redis went away")

    monkeypatch.setattr(svc, "project", broken)
    answer = _post_legal(client, game, random.Random(35))
    assert ctx.store.version(gid) == answer["version"]
    assert _dirty(ctx, settings, gid)
    run_worker()
    assert int(ctx.redis.hget(keys.game(gid), "version")) == answer["version"]


def test_off_leaves_every_commit_to_the_worker(settings, new_game, ctx, client):
    """``QD_INLINE_PROJECTION=off``: the app's commits are the worker's, as before."""
    from service.http.app import create_app

    off = create_app(settings.with_(inline_projection=False), TESTING=True)
    try:
        game = new_game("nauticus", ["ann", "bob"])
        gid = game["id"]
        before = ctx.redis.hget(keys.game(gid), "version")
        _post_legal(off.test_client(), game, random.Random(36))
        assert ctx.redis.hget(keys.game(gid), "version") == before
        assert _dirty(ctx, settings, gid)
    finally:
        off.extensions["quarterdeck"].store.pool.close()
